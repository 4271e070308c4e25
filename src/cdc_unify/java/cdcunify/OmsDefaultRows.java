package cdcunify;

import static cdcunify.StagedRow.reason;

import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF3;

/**
 * SQL function `cdc_oms_default_rows(dialect, value, source_tz)`: a landed OceanBase OMS Default
 * JSON record (spec 003: `oms_default_json`, or `oms_default_ext_json`, whose `__light_type`
 * declares each image's column types) read once and turned into its staged row, so that each model
 * is this function, an explode and the staged select (docs/dialects/oms_default_json.md,
 * oms_default_ext_json.md). One message is one record; each value is decided on its own.
 *
 * Returns `OMS_DEFAULT_ROWS` of src/cdc_unify/jvm.py: one struct. A record that cannot be staged,
 * or whose images its declared types cannot read, has its reason and nothing decoded; a null value
 * (a tombstone) has nothing at all. The JSON is read as the SQL models before it read it, through
 * a variant whose numbers are strings of their digits: nested objects with their keys in UTF-16
 * order, a lone surrogate as '?'. The op (`message_op`) of a DDL record is left null: the model
 * classifies its statement with the shared SQL macro cdc_ddl_op. `key_image` holds the values the
 * model's primary_key is built from.
 */
public final class OmsDefaultRows implements UDF3<String, byte[], String, List<Row>> {
    private static final long serialVersionUID = 1L;

    /** The decoded columns of a row, event_kind to ddl_statement (OMS_DEFAULT_ROWS). */
    private static final int WIDTH = 22;
    private static final Set<String> RECORD_TYPES = Set.of("INSERT", "UPDATE", "DELETE", "ROW", "DDL", "HEARTBEAT");
    private static final Map<String, String> ROW_OPS =
            Map.of("INSERT", "INSERT", "UPDATE", "UPDATE", "DELETE", "DELETE", "ROW", "SNAPSHOT");
    private static final String LIGHT_TYPE = "__light_type";
    private static final String SEPARATOR = "\u0001";
    private static final Pattern EPOCH_SECONDS = Pattern.compile("^-?[0-9]{1,12}$");
    private static final Pattern SEQUENCE = Pattern.compile("^[0-9]{1,30}$");
    private static final Pattern OCEANBASE = Pattern.compile("^(?i)(OB_|OCEANBASE)");
    private static final Pattern TENANT_DB = Pattern.compile("^[^.]+[.].");

    @Override
    public List<Row> call(String dialect, byte[] value, String sourceTz) {
        boolean extended = switch (dialect) {
            case "oms_default_json" -> false;
            case "oms_default_ext_json" -> true;
            default -> throw new IllegalArgumentException("cdc_oms_default_rows: not an OMS Default dialect: " + dialect);
        };
        return JsonDocument.staged(value, WIDTH, document -> new Record(dialect, extended, document.message(), sourceTz));
    }

    /** One record's fields, as the SQL's records, metadata, light_types and images read them. */
    private static final class Record implements JsonDocument.Message {
        final String dialect;
        final boolean extended;
        final String sourceTz;
        final Object recordTypeField;
        final String recordType;
        final String rowOp;
        final boolean needsBefore;
        final boolean needsAfter;
        final Object metaJson;
        final Map<String, Object> meta;
        final Object prevJson;
        final Object postJson;
        final Map<String, Object> prevStruct;
        final Map<String, Object> postStruct;
        final Image prev;
        final Image post;
        final String ddlText;
        final String timestampText;
        final Long seconds;
        final String storeSequence;
        final BigInteger sequenceNumber;

        Record(String dialect, boolean extended, Map<String, Object> message, String sourceTz) {
            this.dialect = dialect;
            this.extended = extended;
            this.sourceTz = sourceTz;
            recordTypeField = message.get("recordType");
            recordType = ExactJson.text(recordTypeField);
            rowOp = recordType == null ? null : ROW_OPS.get(recordType);
            needsBefore = "UPDATE".equals(recordType) || "DELETE".equals(recordType);
            needsAfter = "INSERT".equals(recordType) || "UPDATE".equals(recordType) || "ROW".equals(recordType);
            metaJson = message.get("allMetaData");
            meta = ExactJson.object(metaJson);
            prevJson = message.get("prevStruct");
            postJson = message.get("postStruct");
            prevStruct = ExactJson.object(prevJson);
            postStruct = ExactJson.object(postJson);
            prev = new Image(prevStruct, extended);
            post = new Image(postStruct, extended);
            String postDdl = ExactJson.text(ExactJson.at(postStruct, "ddl"));
            ddlText = postDdl != null ? postDdl : ExactJson.text(ExactJson.at(prevStruct, "ddl"));
            timestampText = metaText("timestamp");
            BigInteger epochSeconds = SparkText.foundNumber(EPOCH_SECONDS, timestampText);
            seconds = epochSeconds == null ? null : epochSeconds.longValue();
            storeSequence = metaText("storeDataSequence");
            sequenceNumber = SparkText.foundNumber(SEQUENCE, storeSequence);
        }

        private String metaText(String field) {
            return ExactJson.text(ExactJson.at(meta, field));
        }

        @Override
        public String[] error() {
            boolean row = rowOp != null;
            String nestedName = ExactJson.nested(ExactJson.at(meta, "db")) ? "allMetaData.db"
                    : ExactJson.nested(ExactJson.at(meta, "table_name")) ? "allMetaData.table_name" : null;
            if (!ExactJson.present(recordTypeField)) {
                return reason("missing_field", "recordType is missing");
            } else if (!RECORD_TYPES.contains(recordType)) {
                return reason("unknown_op", "recordType " + recordType + " is not INSERT, UPDATE, DELETE, ROW, DDL or HEARTBEAT");
            } else if (!ExactJson.present(metaJson)) {
                return reason("missing_field", "allMetaData is missing");
            } else if (meta == null) {
                return reason("wrong_shape", "allMetaData is not an object");
            } else if (nestedName != null) {
                return reason("wrong_shape", nestedName + " is a JSON object/array, not a name");
            } else if (row && isEmpty(metaText("db"))) {
                return reason("missing_field", "allMetaData.db is missing");
            } else if (row && isEmpty(metaText("table_name"))) {
                return reason("missing_field", "allMetaData.table_name is missing");
            }
            return imageError();
        }

        private String[] imageError() {
            if (needsBefore && !ExactJson.present(prevJson)) {
                return reason("missing_field", "prevStruct is missing for " + recordType);
            } else if (needsBefore && prevStruct == null) {
                return reason("wrong_shape", "prevStruct is not an object");
            } else if (needsAfter && !ExactJson.present(postJson)) {
                return reason("missing_field", "postStruct is missing for " + recordType);
            } else if (needsAfter && postStruct == null) {
                return reason("wrong_shape", "postStruct is not an object");
            } else if (recordType.equals("DDL") && ddlText == null) {
                return reason("missing_field", "the DDL record has no \"ddl\" statement");
            } else if (prev.badLightType()) {
                return reason("wrong_shape", "prevStruct." + LIGHT_TYPE + " is not {column: {\"schemaType\": type}}");
            } else if (post.badLightType()) {
                return reason("wrong_shape", "postStruct." + LIGHT_TYPE + " is not {column: {\"schemaType\": type}}");
            } else if (timestampText != null && seconds == null) {
                return reason("invalid_timestamp", "allMetaData.timestamp " + timestampText + " is not epoch seconds");
            } else if (storeSequence != null && sequenceNumber == null) {
                return reason("wrong_shape", "allMetaData.storeDataSequence " + storeSequence
                        + " is not a non-negative integer");
            } else if (needsBefore && !prev.nested.isEmpty()) {
                return reason("invalid_value", "prevStruct values are JSON objects/arrays, not column values: " + prev.nested);
            } else if (needsAfter && !post.nested.isEmpty()) {
                return reason("invalid_value", "postStruct values are JSON objects/arrays, not column values: " + post.nested);
            }
            return null;
        }

        /** The record's staged row, or its quarantine row when an image cannot be read. */
        @Override
        public List<Row> rows() {
            CanonicalImage.Image before = needsBefore ? prev.canonical(dialect, sourceTz) : CanonicalImage.Image.NONE;
            CanonicalImage.Image after = needsAfter ? post.canonical(dialect, sourceTz) : CanonicalImage.Image.NONE;
            if (before.error() != null) {
                return StagedRow.quarantined("invalid_value", "prevStruct: " + before.error(), WIDTH);
            } else if (after.error() != null) {
                return StagedRow.quarantined("invalid_value", "postStruct: " + after.error(), WIDTH);
            }
            boolean row = rowOp != null;
            String db = metaText("db");
            String dbType = metaText("dbType");
            boolean tenant = dbType != null && db != null && OCEANBASE.matcher(dbType).find() && TENANT_DB.matcher(db).find();
            List<String> sentNames = split(metaText("record_primary_key"));
            List<String> keyColumns = SparkText.distinct(sentNames, true);
            return List.of(StagedRow.decoded(0,
                    row ? "ROW" : recordType, recordType.equals("DDL") ? null : row ? rowOp : recordType,
                    dbType == null ? null : dbType.toLowerCase(Locale.ROOT),
                    tenant ? db.substring(0, db.indexOf('.')) : null, tenant ? db.substring(db.indexOf('.') + 1) : db,
                    metaText("table_name"), keyColumns, keyColumns.isEmpty() ? "none" : "message",
                    before.values(), after.values(), row ? false : null, row ? false : null,
                    row && extended ? SparkText.union(prev.declared, post.declared) : null,
                    row ? SparkText.union(before.types(), after.types()) : null,
                    keyImage(keyColumns, sentNames, before.values(), after.values()),
                    seconds == null ? null : seconds * 1_000_000L, seconds == null ? null : "s",
                    storeSequence != null ? storeSequence : metaText("checkpoint"), metaText("uniqueId"),
                    sequenceNumber == null ? null : sequenceNumber.toString(), naturalId(),
                    recordType.equals("DDL") ? ddlText : null));
        }

        /** Each key column's value from after, before, else record_primary_value at the name's
         * first place in record_primary_key (`sentNames`, split). */
        private Map<String, String> keyImage(List<String> columns, List<String> sentNames, Map<String, String> before,
                Map<String, String> after) {
            List<String> sentValues = split(metaText("record_primary_value"));
            Map<String, String> image = new LinkedHashMap<>();
            for (String name : columns) {
                String found = after == null ? null : after.get(name);
                if (found == null && before != null) {
                    found = before.get(name);
                }
                int place = sentNames.indexOf(name);
                if (found == null && sentValues != null && place < sentValues.size()) {
                    found = sentValues.get(place);
                }
                image.put(name, found);
            }
            return image;
        }

        /** SHA-256 of the record without OMS's progress: record type, both images as JSON and the
         * metadata but its checkpoint, joined by U+0001. */
        private String naturalId() {
            Map<String, Object> progressFree = new LinkedHashMap<>();
            meta.forEach((key, field) -> {
                if (!key.equals("checkpoint")) {
                    String text = ExactJson.text(field);
                    progressFree.put(key, text == null ? ExactJson.NULL : text);
                }
            });
            String hashed = String.join(SEPARATOR, orEmpty(recordType), orEmpty(ExactJson.text(prevJson)),
                    orEmpty(ExactJson.text(postJson)), ExactJson.json(progressFree));
            return SparkText.sha2(hashed);
        }
    }

    /** One image (prevStruct or postStruct): its column values as text, the columns holding an
     * object or array, and (OMS Default extended) the types its `__light_type` declares. */
    private static final class Image {
        final Map<String, String> values;
        final String nested;
        final Object lightType;
        final Map<String, String> declared;

        Image(Map<String, Object> struct, boolean extended) {
            lightType = extended ? ExactJson.at(struct, LIGHT_TYPE) : null;
            Map<String, Object> light = ExactJson.object(lightType);
            if (light == null) {
                declared = null;
            } else {
                declared = new LinkedHashMap<>();
                light.forEach((column, type) -> declared.put(column,
                        ExactJson.object(type) == null ? null : ExactJson.text(ExactJson.at(type, "schemaType"))));
            }
            if (struct == null) {
                values = null;
                nested = null;
                return;
            }
            Map<String, Object> columns = new LinkedHashMap<>(struct);
            if (extended) {
                columns.remove(LIGHT_TYPE);
            }
            values = ExactJson.textMap(columns);
            nested = ExactJson.nestedKeys(columns);
        }

        /** `__light_type` sent but not {column: {"schemaType": type}}. */
        boolean badLightType() {
            return ExactJson.present(lightType) && (declared == null || declared.containsValue(null));
        }

        /** The image in canonical text (OMS Default JSON declares no types: kept as sent). */
        CanonicalImage.Image canonical(String dialect, String sourceTz) {
            return CanonicalImage.image(dialect, values, declared, sourceTz);
        }
    }

    /** split(text, '\u0001'): every piece, empty ones too; null for null. */
    private static List<String> split(String text) {
        return text == null ? null : List.of(text.split(SEPARATOR, -1));
    }

    private static boolean isEmpty(String text) {
        return text == null || text.isEmpty();
    }

    private static String orEmpty(String text) {
        return text == null ? "" : text;
    }
}
