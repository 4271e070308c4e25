package cdcunify;

import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;

/**
 * A landed value read as the SQL models that read `cdc_json_documents` read it, for the message
 * functions that replace them (OmsDefaultRows, OggRows): the object as parsed (keys as sent) and as
 * Spark's variant gives it back (SparkText.tree), or the one staged row of a tombstone or of a
 * value that is no JSON object, with cdc_document_errors' codes and texts. A nested object whose
 * keys Spark stores as one is no JSON value a model can read (SparkText.nestedKeysCollide).
 */
record JsonDocument(Map<String, Object> parsed, Map<String, Object> message, List<Row> refusal) {
    static final String NOT_JSON = "the value is not valid JSON (RFC 8259; duplicate keys are rejected too)";

    static JsonDocument read(byte[] value, int width) {
        if (value == null) {
            return refused(StagedRow.tombstone(width));
        }
        String text = ExactJson.utf8(value);
        if (text == null) {
            return refused(StagedRow.quarantined("invalid_utf8", "the value is not valid UTF-8", width));
        }
        Object parsed = ExactJson.parse(text);
        if (parsed == null || SparkText.nestedKeysCollide(parsed)) {
            return refused(StagedRow.quarantined("invalid_json", NOT_JSON, width));
        }
        Map<String, Object> message = ExactJson.object(SparkText.tree(parsed));
        if (message == null) {
            return refused(StagedRow.quarantined("wrong_shape", "the JSON value is not an object", width));
        }
        return new JsonDocument(ExactJson.object(parsed), message, null);
    }

    private static JsonDocument refused(List<Row> row) {
        return new JsonDocument(null, null, row);
    }
}
