package cdcunify;

import static cdcunify.StagedRow.reason;

import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.ResolverStyle;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF2;

/**
 * SQL function `cdc_ckafka_rows(value, source_tz)`: a landed Tencent CKafka connector message
 * (spec 002, docs/dialects/ckafka_json.md) read once and turned into its staged row. DML is
 * "official format one" (TYPE I/U/D, NEW_VALUES/OLD_VALUES, a binlog position, TIME as a wall clock
 * in the source zone); DDL arrives in Canal shape on the same topic. Each value is decided on its
 * own; the key, which format one does not name, is the model's: a small table of the CREATE TABLE
 * statements joined to the rows (stg_ckafka_json__changes).
 *
 * Returns `CKAFKA_ROWS` of src/cdc_unify/jvm.py: one struct. A message that cannot be staged has
 * its reason and nothing decoded; a null value (a tombstone) has nothing at all. The JSON is read as
 * the SQL model before it read it (JsonDocument); CKafka sends no column types, so every value is
 * kept as sent. `binlog_number` is a format-one event's binlog file index * 2^32 + offset.
 */
public final class CkafkaRows implements UDF2<byte[], String, List<Row>> {
    private static final long serialVersionUID = 1L;

    /** The decoded columns of a row, event_kind to ddl_statement (CKAFKA_ROWS). */
    private static final int WIDTH = 16;
    /** The spec's field table writes insert as `l`, its sample as `I`: both are INSERT. */
    private static final Map<String, String> OPS = Map.of("I", "INSERT", "l", "INSERT", "U", "UPDATE", "D", "DELETE");
    private static final Pattern TIME = Pattern.compile("^[0-9]{14}$");
    private static final Pattern BINLOG_POS = Pattern.compile("^[0-9]{1,18}$");
    private static final Pattern FILE_INDEX = Pattern.compile("([0-9]+)$");
    /** Spark's try_to_timestamp(text, 'yyyyMMddHHmmss'). */
    private static final DateTimeFormatter WALL =
            DateTimeFormatter.ofPattern("uuuuMMddHHmmss").withResolverStyle(ResolverStyle.STRICT);

    @Override
    public List<Row> call(byte[] value, String sourceTz) {
        ZoneId zone = ZoneId.of(sourceTz, ZoneId.SHORT_IDS);
        return JsonDocument.staged(value, WIDTH, document -> {
            Map<String, Object> message = document.message();
            return message.containsKey("TYPE") ? new FormatOne(message, zone)
                    : message.containsKey("type") ? new CanalDdl(message) : NEITHER;
        });
    }

    /** A message that is neither format one (a `TYPE` field, even null) nor Canal-shaped (`type`). */
    private static final JsonDocument.Message NEITHER = new JsonDocument.Message() {
        @Override
        public String[] error() {
            return reason("missing_field", "neither TYPE (format one DML) nor type (Canal-shaped DDL) is present");
        }

        @Override
        public List<Row> rows() {
            throw new IllegalStateException("a message with an error has no rows");
        }
    };

    /** A format-one DML message, as the SQL's message_fields, classified and timed read it. */
    private static final class FormatOne implements JsonDocument.Message {
        final Map<String, Object> message;
        final String typeCode;
        final String rowOp;
        final String database;
        final String table;
        final String timeText;
        final Long timeMicros;
        final String binlogName;
        final String binlogPos;
        final boolean needsNew;
        final boolean needsOld;
        final Object newJson;
        final Object oldJson;
        final Map<String, Object> newStruct;
        final Map<String, Object> oldStruct;

        FormatOne(Map<String, Object> message, ZoneId zone) {
            this.message = message;
            typeCode = ExactJson.text(message.get("TYPE"));
            rowOp = typeCode == null ? null : OPS.get(typeCode);
            database = ExactJson.text(message.get("DATABASE"));
            table = ExactJson.text(message.get("TABLE"));
            timeText = ExactJson.text(message.get("TIME"));
            timeMicros = SparkText.finds(TIME, timeText) ? WallClock.utcMicros(timeText, WALL, zone) : null;
            binlogName = ExactJson.text(message.get("BINLOG_NAME"));
            binlogPos = ExactJson.text(message.get("BINLOG_POS"));
            needsNew = "INSERT".equals(rowOp) || "UPDATE".equals(rowOp);
            needsOld = "UPDATE".equals(rowOp) || "DELETE".equals(rowOp);
            newJson = message.get("NEW_VALUES");
            oldJson = message.get("OLD_VALUES");
            newStruct = ExactJson.object(newJson);
            oldStruct = ExactJson.object(oldJson);
        }

        @Override
        public String[] error() {
            String nestedName = ExactJson.firstNested(message, "DATABASE", "TABLE", "BINLOG_NAME");
            if (!ExactJson.present(message.get("TYPE"))) {
                return reason("missing_field", "TYPE is null");
            } else if (rowOp == null) {
                return reason("unknown_op", "TYPE " + typeCode + " is not I, U or D");
            } else if (nestedName != null) {
                return reason("wrong_shape", nestedName + " is a JSON object/array, not a name");
            } else if (database == null || database.isEmpty()) {
                return reason("missing_field", "DATABASE is missing");
            } else if (table == null || table.isEmpty()) {
                return reason("missing_field", "TABLE is missing");
            } else if (timeText == null) {
                return reason("missing_field", "TIME is missing");
            } else if (timeMicros == null) {
                return reason("invalid_timestamp", "TIME " + timeText + " is not yyyyMMddHHmmss");
            }
            return imageError();
        }

        private String[] imageError() {
            if (needsNew && !ExactJson.present(newJson)) {
                return reason("missing_field", "NEW_VALUES is missing for TYPE " + typeCode);
            } else if (needsNew && newStruct == null) {
                return reason("wrong_shape", "NEW_VALUES is not a JSON object");
            } else if (needsOld && !ExactJson.present(oldJson)) {
                return reason("missing_field", "OLD_VALUES is missing for TYPE " + typeCode);
            } else if (needsOld && oldStruct == null) {
                return reason("wrong_shape", "OLD_VALUES is not a JSON object");
            } else if (binlogPos != null && !SparkText.finds(BINLOG_POS, binlogPos)) {
                return reason("wrong_shape", "BINLOG_POS " + binlogPos + " is not a binlog offset");
            } else if (needsNew && !ExactJson.nestedKeys(newStruct).isEmpty()) {
                return reason("invalid_value",
                        "NEW_VALUES values are JSON objects/arrays, not column values: " + ExactJson.nestedKeys(newStruct));
            } else if (needsOld && !ExactJson.nestedKeys(oldStruct).isEmpty()) {
                return reason("invalid_value",
                        "OLD_VALUES values are JSON objects/arrays, not column values: " + ExactJson.nestedKeys(oldStruct));
            }
            return null;
        }

        @Override
        public List<Row> rows() {
            Map<String, String> before = needsOld ? ExactJson.textMap(oldStruct) : null;
            Map<String, String> after = needsNew ? ExactJson.textMap(newStruct) : null;
            return List.of(StagedRow.decoded(0,
                    "ROW", rowOp, database, table, before, after, before == null ? null : false,
                    after == null ? null : false, CanonicalImage.sentTypes(before, after),
                    timeMicros, "s", null,
                    binlogName != null && binlogPos != null ? binlogName + ":" + binlogPos : null,
                    SparkText.nullIfEmpty(ExactJson.text(message.get("GLOBAL_ID"))), binlogNumber(), null));
        }

        /** try_add(try_multiply(file index, 2^32), try_cast(BINLOG_POS as bigint)): null when a part
         * is missing or the sum passes a bigint. */
        private Long binlogNumber() {
            String index = binlogName == null ? null : FILE_INDEX.matcher(binlogName).results()
                    .findFirst().map(m -> m.group(1)).orElse("");
            Long fileIndex = SparkText.tryBigint(index);
            Long offset = SparkText.tryBigint(binlogPos);
            if (fileIndex == null || offset == null) {
                return null;
            }
            try {
                return Math.addExact(Math.multiplyExact(fileIndex, 4_294_967_296L), offset);
            } catch (ArithmeticException e) {
                return null;
            }
        }
    }

    /** A Canal-shaped DDL message, as the SQL's message_fields, classified and timed read it. */
    private static final class CanalDdl implements JsonDocument.Message {
        final Map<String, Object> message;
        final String canalType;
        final String ddlOp;
        final String sqlText;
        final String esText;
        final String esUnit;
        final Long esMicros;
        final String tsText;
        final Long tsMicros;

        CanalDdl(Map<String, Object> message) {
            this.message = message;
            canalType = ExactJson.text(message.get("type"));
            String isDdl = ExactJson.text(message.get("isDdl"));
            String kind = CanalRows.eventKind(canalType, isDdl == null ? null : isDdl.toLowerCase(Locale.ROOT));
            ddlOp = "DDL".equals(kind) ? CanalRows.op(canalType) : null;
            sqlText = ExactJson.text(message.get("sql"));
            esText = ExactJson.text(message.get("es"));
            esUnit = CanalRows.epochUnit(esText);
            esMicros = CanalRows.epochMicros(esText, esUnit);
            tsText = ExactJson.text(message.get("ts"));
            tsMicros = CanalRows.epochMicros(tsText, CanalRows.epochUnit(tsText));
        }

        @Override
        public String[] error() {
            String nestedName = ExactJson.firstNested(message, "database", "table");
            if (!ExactJson.present(message.get("type"))) {
                return reason("missing_field", "type is null");
            } else if (ddlOp == null) {
                return reason("unknown_op", "type " + canalType + " is not a Canal DDL type (format one carries the DML)");
            } else if (nestedName != null) {
                return reason("wrong_shape", nestedName + " is a JSON object/array, not a name");
            } else if (sqlText == null) {
                return reason("missing_field", "sql is missing for DDL type " + canalType);
            } else if (esText == null) {
                return reason("missing_field", "es (execution time) is missing");
            } else if (esMicros == null) {
                return reason("invalid_timestamp", "es " + esText + " is not epoch seconds/milliseconds");
            } else if (tsText != null && tsMicros == null) {
                return reason("invalid_timestamp", "ts " + tsText + " is not epoch seconds/milliseconds");
            }
            return null;
        }

        @Override
        public List<Row> rows() {
            return List.of(StagedRow.decoded(0,
                    "DDL", ddlOp, SparkText.nullIfEmpty(ExactJson.text(message.get("database"))),
                    SparkText.nullIfEmpty(ExactJson.text(message.get("table"))), null, null, null, null, null,
                    esMicros, esUnit, tsMicros, null, null, null, sqlText));
        }
    }
}
