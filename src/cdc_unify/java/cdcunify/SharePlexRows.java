package cdcunify;

import static cdcunify.StagedRow.reason;

import java.math.BigInteger;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.ResolverStyle;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF2;

/**
 * SQL function `cdc_shareplex_rows(value, source_tz)`: a landed OceanBase OMS SharePlex JSON message
 * (spec 003, docs/dialects/oms_shareplex_json.md) read once and turned into its staged row, so that
 * stg_oms_shareplex_json__changes is this function, an explode and the staged select. One message is
 * one row change; each value is decided on its own.
 *
 * Returns `SHAREPLEX_ROWS` of src/cdc_unify/jvm.py: one struct. A message that cannot be staged has
 * its reason and nothing decoded; a null value (a tombstone) has nothing at all. The JSON is read as
 * the SQL model before it read it (JsonDocument). SharePlex names no key columns: `rowid_key` is the
 * value part of `meta.rowid`, which the model splits into the row's key. Every value is kept as sent.
 */
public final class SharePlexRows implements UDF2<byte[], String, List<Row>> {
    private static final long serialVersionUID = 1L;

    /** The decoded columns of a row, event_kind to natural_id (SHAREPLEX_ROWS). */
    private static final int WIDTH = 17;
    private static final Map<String, String> OPS = Map.of("ins", "INSERT", "upd", "UPDATE", "del", "DELETE");
    private static final String SEPARATOR = "\u0001";
    private static final Pattern WALL_CLOCK = Pattern.compile("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$");
    private static final Pattern SCN = Pattern.compile("^[0-9]{1,30}$");
    /** The meta fields the row is built from: each is text in the spec (a number or true/false is
     * read as its text), so an object or array there is a message of the wrong shape. */
    private static final String[] READ_META = {"op", "table", "rowid", "time", "posttime", "trans", "scn"};
    /** Spark's try_to_timestamp(text, 'yyyy-MM-dd HH:mm:ss'). */
    private static final DateTimeFormatter WALL =
            DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss").withResolverStyle(ResolverStyle.STRICT);

    @Override
    public List<Row> call(byte[] value, String sourceTz) {
        ZoneId zone = ZoneId.of(sourceTz, ZoneId.SHORT_IDS);
        return JsonDocument.staged(value, WIDTH, document -> new Change(document.message(), zone));
    }

    /** One message's fields, as the SQL's records, metadata and images read them. */
    private static final class Change implements JsonDocument.Message {
        final Object metaJson;
        final Map<String, Object> meta;
        final Object dataJson;
        final Map<String, Object> data;
        final Object keyJson;
        final Map<String, Object> key;
        final String opCode;
        final String rowOp;
        final String qualifiedTable;
        final String rowId;
        final String timeText;
        final String postTimeText;
        final Long changeMicros;
        final Long postedMicros;
        final String scn;
        final BigInteger scnNumber;

        Change(Map<String, Object> message, ZoneId zone) {
            metaJson = message.get("meta");
            meta = ExactJson.object(metaJson);
            dataJson = message.get("data");
            data = ExactJson.object(dataJson);
            keyJson = message.get("key");
            key = ExactJson.object(keyJson);
            opCode = metaText("op");
            rowOp = opCode == null ? null : OPS.get(opCode);
            qualifiedTable = metaText("table");
            rowId = metaText("rowid");
            timeText = metaText("time");
            postTimeText = metaText("posttime");
            changeMicros = utcMicros(timeText, zone);
            postedMicros = utcMicros(postTimeText, zone);
            scn = metaText("scn");
            scnNumber = SparkText.foundNumber(SCN, scn);
        }

        private String metaText(String field) {
            return ExactJson.text(ExactJson.at(meta, field));
        }

        @Override
        public String[] error() {
            boolean update = "upd".equals(opCode);
            String metaNested = meta == null ? null : ExactJson.firstNested(meta, READ_META);
            if (!ExactJson.present(metaJson)) {
                return reason("missing_field", "meta is missing");
            } else if (meta == null) {
                return reason("wrong_shape", "meta is not an object");
            } else if (metaNested != null) {
                return reason("wrong_shape", "meta." + metaNested + " is a JSON object/array, not text");
            } else if (!ExactJson.present(meta.get("op"))) {
                return reason("missing_field", "meta.op is missing");
            } else if (rowOp == null) {
                return reason("unknown_op", "meta.op " + opCode + " is not ins, upd or del");
            } else if (qualifiedTable == null || qualifiedTable.isEmpty()) {
                return reason("missing_field", "meta.table is missing");
            } else if (rowId == null) {
                return reason("missing_field", "meta.rowid is missing");
            } else if (!rowId.startsWith(qualifiedTable + "-")) {
                return reason("wrong_shape",
                        "meta.rowid " + rowId + " does not start with meta.table " + qualifiedTable + "-");
            } else if (!ExactJson.present(dataJson)) {
                return reason("missing_field", "data is missing");
            } else if (data == null) {
                return reason("wrong_shape", "data is not an object");
            } else if (update && !ExactJson.present(keyJson)) {
                return reason("missing_field", "key (the before image) is missing for upd");
            } else if (update && key == null) {
                return reason("wrong_shape", "key is not an object");
            }
            return valueError(update);
        }

        private String[] valueError(boolean update) {
            String dataNested = ExactJson.nestedKeys(data);
            if (timeText != null && changeMicros == null) {
                return reason("invalid_timestamp", "meta.time " + timeText + " is not YYYY-MM-DDTHH:mm:ss");
            } else if (postTimeText != null && postedMicros == null) {
                return reason("invalid_timestamp", "meta.posttime " + postTimeText + " is not YYYY-MM-DDTHH:mm:ss");
            } else if (scn != null && scnNumber == null) {
                return reason("wrong_shape", "meta.scn " + scn + " is not a non-negative integer");
            } else if (!dataNested.isEmpty()) {
                return reason("invalid_value", "data values are JSON objects/arrays, not column values: " + dataNested);
            } else if (update && !ExactJson.nestedKeys(key).isEmpty()) {
                return reason("invalid_value",
                        "key values are JSON objects/arrays, not column values: " + ExactJson.nestedKeys(key));
            }
            return null;
        }

        /** The staged row. ins: data is the new row; del: data is the old row; upd: data holds the
         * changed columns only and key the whole old row. */
        @Override
        public List<Row> rows() {
            Map<String, String> before = rowOp.equals("INSERT") ? null : ExactJson.textMap(rowOp.equals("DELETE") ? data : key);
            Map<String, String> after = rowOp.equals("DELETE") ? null : ExactJson.textMap(data);
            int dot = qualifiedTable.indexOf('.');
            return List.of(StagedRow.decoded(0,
                    "ROW", rowOp, dot < 0 ? null : qualifiedTable.substring(0, dot), qualifiedTable.substring(dot + 1),
                    rowId.substring(qualifiedTable.length() + 1), before, after, false, rowOp.equals("UPDATE"),
                    CanonicalImage.sentTypes(before, after),
                    changeMicros, changeMicros == null ? null : "s", postedMicros,
                    scn, metaText("trans"), scnNumber == null ? null : scnNumber.toString(), naturalId()));
        }

        /** SHA-256 of the change: data and key as JSON, and the metadata but posttime (when OMS wrote
         * the message, not part of the change), joined by U+0001. */
        private String naturalId() {
            Map<String, String> changeMeta = new LinkedHashMap<>();
            meta.forEach((field, text) -> {
                if (!field.equals("posttime")) {
                    changeMeta.put(field, ExactJson.text(text));
                }
            });
            return SparkText.sha2(String.join(SEPARATOR, orEmpty(ExactJson.text(dataJson)), orEmpty(ExactJson.text(keyJson)),
                    ExactJson.json(changeMeta)));
        }
    }

    /** `YYYY-MM-DDTHH:mm:ss` in the source zone as epoch microseconds; null for any other text. */
    private static Long utcMicros(String text, ZoneId zone) {
        return SparkText.finds(WALL_CLOCK, text) ? WallClock.utcMicros(text.replace('T', ' '), WALL, zone) : null;
    }

    private static String orEmpty(String text) {
        return text == null ? "" : text;
    }
}
