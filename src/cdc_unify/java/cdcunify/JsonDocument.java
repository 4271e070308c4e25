package cdcunify;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.sql.Row;

/**
 * A landed value read as the SQL staging models before the message functions read it (through a
 * variant whose numbers are strings of their digits), for OmsDefaultRows, OggRows, SharePlexRows,
 * CkafkaRows and MaxwellRows: the object as parsed (keys as sent) and as Spark's variant gives it
 * back (SparkText.tree), or the one staged row of a tombstone or of a value that is no JSON object:
 * not UTF-8 (invalid_utf8), not one JSON value (invalid_json), not an object (wrong_shape). A nested
 * object whose keys Spark stores as one is no JSON value a model can read
 * (SparkText.nestedKeysCollide).
 */
record JsonDocument(Map<String, Object> parsed, Map<String, Object> message, List<Row> refusal) {
    static final String NOT_JSON = "the value is not valid JSON (RFC 8259; duplicate keys are rejected too)";

    /** A message read from its document: the first reason it cannot be staged, else its staged rows. */
    interface Message {
        /** {error_code, error_detail}; null when the message can be staged. */
        String[] error();

        List<Row> rows();
    }

    /** The staged rows of a landed value: the document's refusal, else the message `reader` reads
     * from it quarantined with its first error, else its rows. */
    static List<Row> staged(byte[] value, int width, Function<JsonDocument, ? extends Message> reader) {
        JsonDocument document = read(value, width);
        if (document.refusal() != null) {
            return document.refusal();
        }
        Message message = reader.apply(document);
        String[] error = message.error();
        return error != null ? StagedRow.quarantined(error[0], error[1], width) : message.rows();
    }

    static JsonDocument read(byte[] value, int width) {
        if (value == null) {
            return refused(StagedRow.tombstone(width));
        }
        String text = ExactJson.utf8(value);
        if (text == null) {
            return refused(StagedRow.quarantined("invalid_utf8", "the value is not valid UTF-8", width));
        }
        Object parsed = ExactJson.parse(text);
        if (parsed == null || SparkText.nestedKeysCollide(text, parsed)) {
            return refused(StagedRow.quarantined("invalid_json", NOT_JSON, width));
        }
        Map<String, Object> message = ExactJson.object(SparkText.tree(text, parsed));
        if (message == null) {
            return refused(StagedRow.quarantined("wrong_shape", "the JSON value is not an object", width));
        }
        return new JsonDocument(ExactJson.object(parsed), message, null);
    }

    private static JsonDocument refused(List<Row> row) {
        return new JsonDocument(null, null, row);
    }
}
