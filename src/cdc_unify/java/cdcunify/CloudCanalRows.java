package cdcunify;

import static cdcunify.StagedRow.reason;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF2;

/**
 * SQL function `cdc_cloudcanal_rows(value, source_tz)`: a landed CloudCanal message (spec 000,
 * "CloudCanal Json": one JSON object, one action on one table, possibly many rows) read once and
 * turned into its staged rows, so that stg_cloudcanal_json__changes is this function, an explode
 * and the staged select (docs/dialects/cloudcanal_json.md). Each value is decided on its own: no
 * window over the landing rows, no shuffle.
 *
 * Returns `CLOUDCANAL_ROWS` of src/cdc_unify/jvm.py: one struct per row of `data` (a DELETE with
 * no `data`: of `before`), one for a DDL or TRANSACTIONEND message. A message that cannot be
 * staged, or whose images its declared types cannot read, is ONE struct, row_index 0, with its
 * reason and nothing decoded; a null value (a tombstone) one struct with nothing at all. The op
 * (`message_op`) of a DDL that sends its statement is left null: the model classifies statements
 * with the shared SQL macro cdc_ddl_op.
 */
public final class CloudCanalRows implements UDF2<byte[], String, List<Row>> {
    private static final long serialVersionUID = 1L;

    /** The decoded columns of a row, event_kind to ddl_statement (CLOUDCANAL_ROWS). */
    private static final int WIDTH = 16;
    private static final Pattern EPOCH_MS = Pattern.compile("^-?[0-9]{1,16}$");
    /** Year 10000 in epoch milliseconds: a time at or beyond it is not a timestamp. */
    private static final long EPOCH_MS_LIMIT = 253402300800000L;
    private static final Set<String> DDL_ACTIONS =
            Set.of("CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE", "CREATE_INDEX", "DROP_INDEX");
    private static final String SHAPE = "not a CloudCanal message: the value must be a JSON object whose data/before"
            + " are lists of objects (before as long as data), dbValType/jdbcType objects, pks a list of names and"
            + " tableChanges.table.columns distinct named columns";

    @Override
    public List<Row> call(byte[] value, String sourceTz) {
        if (value == null) {
            return StagedRow.tombstone(WIDTH);
        }
        String text = ExactJson.utf8(value);
        if (text == null) {
            return StagedRow.quarantined("invalid_utf8", "the value is not UTF-8 text", WIDTH);
        }
        Object parsed = ExactJson.parse(text);
        if (parsed == null) {
            return StagedRow.quarantined("invalid_json", "the value is not JSON (or repeats a key)", WIDTH);
        }
        // as the SQL model read it, through Spark's variant
        Object document = SparkText.tree(parsed);
        Map<String, Object> object = ExactJson.object(document);
        if (object == null) {
            return StagedRow.quarantined("wrong_shape", SHAPE, WIDTH);
        }
        Message message = new Message(object);
        String[] error = message.error();
        if (error != null) {
            return StagedRow.quarantined(error[0], error[1], WIDTH);
        }
        return message.stage(sourceTz);
    }

    /** One CloudCanal message's fields, read as the checks and columns use them. */
    private static final class Message {
        final Map<String, Object> fields;
        final String action;
        final String entryType;
        final Boolean isDdlFlag;
        final String db;
        final String schema;
        final String table;
        final String sqlText;
        final String execTsText;
        final String sendTsText;
        final Long execMs;
        final Long sendMs;
        final List<Map<String, String>> dataRows;
        final List<Map<String, String>> beforeRows;
        final Map<String, String> dbValType;
        final Map<String, String> jdbcType;
        final List<String> pks;
        final List<Map<String, String>> ddlColumns;
        final List<String> ddlPrimaryKey;
        final String eventKind;

        Message(Map<String, Object> message) {
            fields = message;
            action = ExactJson.text(message.get("action"));
            String entry = ExactJson.text(message.get("entryType"));
            entryType = entry == null ? "ROWDATA" : entry;
            // only a JSON boolean: the text "no" or a number is not one
            isDdlFlag = message.get("isDdl") instanceof Boolean flag ? flag : null;
            db = SparkText.nullIfEmpty(ExactJson.text(message.get("db")));
            schema = SparkText.nullIfEmpty(ExactJson.text(message.get("schema")));
            table = SparkText.nullIfEmpty(ExactJson.text(message.get("table")));
            sqlText = SparkText.nullIfEmpty(trimSpaces(ExactJson.text(message.get("sql"))));
            execTsText = ExactJson.text(message.get("execTs"));
            sendTsText = ExactJson.text(message.get("sendTs"));
            execMs = epochMs(execTsText);
            sendMs = epochMs(sendTsText);
            dataRows = ExactJson.textMaps(message.get("data"));
            beforeRows = ExactJson.textMaps(message.get("before"));
            dbValType = ExactJson.textMap(message.get("dbValType"));
            jdbcType = ExactJson.textMap(message.get("jdbcType"));
            pks = ExactJson.textArray(message.get("pks"));
            Object tableChanges = message.get("tableChanges");
            ddlColumns = ExactJson.textMaps(ExactJson.at(tableChanges, "table", "columns"));
            ddlPrimaryKey = ExactJson.textArray(ExactJson.at(tableChanges, "table", "primaryKeyColumnNames"));
            eventKind = entryType.equals("TRANSACTIONEND") ? "TRANSACTION" : Boolean.TRUE.equals(isDdlFlag) ? "DDL" : "ROW";
        }

        private boolean has(String field) {
            return ExactJson.present(fields.get(field));
        }

        /** {error_code, error_detail} of the first reason the message cannot be staged; null if none. */
        String[] error() {
            String nestedName = ExactJson.firstNested(fields, "db", "schema", "table");
            if (has("isDdl") && isDdlFlag == null) {
                return reason("wrong_shape", "isDdl " + ExactJson.json(fields.get("isDdl")) + " is not a JSON boolean");
            } else if (nestedName != null) {
                return reason("wrong_shape", nestedName + " is a JSON object/array, not a name");
            } else if (has("data") && (dataRows == null || dataRows.contains(null))
                    || has("before") && (beforeRows == null || beforeRows.contains(null))
                    || has("dbValType") && dbValType == null
                    || has("jdbcType") && jdbcType == null
                    || has("pks") && (pks == null || pks.contains(null))
                    || has("tableChanges") && ExactJson.object(fields.get("tableChanges")) == null
                    || badDdlColumns()) {
                return reason("wrong_shape", SHAPE);
            } else if (!entryType.equals("ROWDATA") && !entryType.equals("TRANSACTIONEND")) {
                return unknownOp();
            } else if (execTsText == null) {
                return reason("missing_field", "execTs is missing");
            } else if (!inRange(execMs) || sendTsText != null && !inRange(sendMs)) {
                return reason("invalid_timestamp", "execTs/sendTs must be epoch milliseconds: " + execTsText + " / "
                        + (sendTsText == null ? "" : sendTsText));
            } else if (!eventKind.equals("ROW")) {
                return null;
            }
            return rowError();
        }

        private String[] rowError() {
            int dataCount = dataRows == null ? 0 : dataRows.size();
            int beforeCount = beforeRows == null ? 0 : beforeRows.size();
            if (action == null) {
                return reason("missing_field", "action is missing");
            } else if (!action.equals("INSERT") && !action.equals("UPDATE") && !action.equals("DELETE")) {
                return unknownOp();
            } else if (table == null) {
                return reason("missing_field", "table is missing");
            } else if (dataCount == 0 && !(action.equals("DELETE") && beforeCount > 0)) {
                return reason("missing_field", action + " carries no rows in data");
            } else if (action.equals("UPDATE") && beforeCount != 0 && beforeCount != dataCount) {
                return reason("wrong_shape", SHAPE);
            }
            return null;
        }

        private String[] unknownOp() {
            return reason("unknown_op", "entryType " + entryType + " / action " + (action == null ? "null" : action)
                    + " is not a CloudCanal operation");
        }

        /** tableChanges.table.columns present but not a list of distinctly named column objects. */
        private boolean badDdlColumns() {
            if (!ExactJson.present(ExactJson.at(fields.get("tableChanges"), "table", "columns"))) {
                return false;
            }
            if (ddlColumns == null || ddlColumns.contains(null)) {
                return true;
            }
            Set<String> names = new HashSet<>();
            for (Map<String, String> column : ddlColumns) {
                String name = column.get("name");
                if (name == null || !names.add(name)) {
                    return true;
                }
            }
            return false;
        }

        /** The message's staged rows, or its one quarantine row when an image cannot be read. */
        List<Row> stage(String sourceTz) {
            Map<String, String> sourceTypes = eventKind.equals("DDL") && ddlColumns != null
                    ? ddlColumnTypes() : messageSourceTypes();
            if (!eventKind.equals("ROW")) {
                CanonicalImage.Image ddl = eventKind.equals("DDL")
                        ? CanonicalImage.image("cloudcanal_json", Map.of(), sourceTypes, sourceTz) : CanonicalImage.Image.NONE;
                boolean transaction = eventKind.equals("TRANSACTION");
                return List.of(StagedRow.decoded(0, columns(null, null, transaction ? null : sourceTypes,
                        transaction ? null : ddl.types())));
            }
            List<Map<String, String>> images = dataRows != null && !dataRows.isEmpty() ? dataRows : beforeRows;
            List<Row> rows = new ArrayList<>(images.size());
            String failure = null;
            for (int r = 0; r < images.size(); r++) {
                Map<String, String> image = images.get(r);
                Map<String, String> afterValues = action.equals("DELETE") ? null : image;
                Map<String, String> beforeValues = action.equals("DELETE") ? image
                        : action.equals("UPDATE") && beforeRows != null && r < beforeRows.size()
                        ? beforeRows.get(r) : null;
                CanonicalImage.Image after = CanonicalImage.image("cloudcanal_json", afterValues, sourceTypes, sourceTz);
                CanonicalImage.Image before = CanonicalImage.image("cloudcanal_json", beforeValues, sourceTypes, sourceTz);
                String error = after.error() != null ? after.error() : before.error();
                if (error != null) {
                    failure = latest(failure, "row " + r + ": " + error);
                } else if (failure == null) {
                    Map<String, String> types = after.types() != null ? after.types() : before.types();
                    rows.add(StagedRow.decoded(r, columns(before.values(), after.values(), sourceTypes, types)));
                }
            }
            return failure == null ? rows : StagedRow.quarantined("invalid_value", failure, WIDTH);
        }

        /** The decoded columns of a staged row, event_kind to ddl_statement (CLOUDCANAL_ROWS). */
        private Object[] columns(Map<String, String> before, Map<String, String> after, Map<String, String> sourceTypes,
                Map<String, String> types) {
            boolean row = eventKind.equals("ROW");
            boolean ddlKey = eventKind.equals("DDL") && ddlPrimaryKey != null && !ddlPrimaryKey.isEmpty();
            List<String> messageKey = SparkText.distinct(pks, true);
            return new Object[] {
                eventKind, op(), db, schema, table,
                ddlKey ? SparkText.distinct(ddlPrimaryKey, false) : messageKey,
                ddlKey ? "ddl" : messageKey.isEmpty() ? "none" : "message",
                before, after,
                row ? before != null && after != null && !before.keySet().containsAll(after.keySet()) : null,
                row ? before != null && after != null && !after.keySet().containsAll(before.keySet()) : null,
                sourceTypes, types, execMs * 1000L, sendMs == null ? null : sendMs * 1000L,
                eventKind.equals("DDL") ? sqlText : null,
            };
        }

        /** The staged op (`message_op`); null for a DDL whose statement the model classifies (cdc_ddl_op). */
        private String op() {
            if (eventKind.equals("TRANSACTION")) {
                return "TRANSACTIONEND";
            } else if (eventKind.equals("ROW")) {
                return action;
            } else if (sqlText != null) {
                return null;
            }
            String upper = action == null ? null : action.toUpperCase(Locale.ROOT);
            return upper != null && DDL_ACTIONS.contains(upper) ? upper : "QUERY";
        }

        /** dbValType, then for a column only jdbcType names its java.sql.Types code as `jdbc:<code>`. */
        private Map<String, String> messageSourceTypes() {
            Map<String, String> jdbc = new LinkedHashMap<>();
            if (jdbcType != null) {
                jdbcType.forEach((column, code) -> jdbc.put(column, code == null ? null : "jdbc:" + code));
            }
            return SparkText.union(jdbc, dbValType);
        }

        /** A DDL's tableChanges columns in `position` order (list order where it is not an int):
         * typeExpression, else typeName, else jdbc:<jdbcType>, else ''. */
        private Map<String, String> ddlColumnTypes() {
            List<int[]> order = new ArrayList<>(ddlColumns.size());
            for (int i = 0; i < ddlColumns.size(); i++) {
                Integer position = SparkText.integer(ddlColumns.get(i).get("position"));
                order.add(new int[] {position == null ? i : position, i});
            }
            order.sort(Comparator.<int[]>comparingInt(p -> p[0]).thenComparingInt(p -> p[1]));
            Map<String, String> types = new LinkedHashMap<>();
            for (int[] place : order) {
                Map<String, String> column = ddlColumns.get(place[1]);
                String declared = column.get("typeExpression");
                if (declared == null) {
                    declared = column.get("typeName");
                }
                if (declared == null) {
                    declared = column.get("jdbcType") == null ? "" : "jdbc:" + column.get("jdbcType");
                }
                types.put(column.get("name"), declared);
            }
            return types;
        }
    }

    /** The later of two refusal texts in Spark's string order (UTF-8 bytes), as the model's max. */
    private static String latest(String a, String b) {
        return a == null || ExactJson.UTF8_ORDER.compare(b, a) > 0 ? b : a;
    }

    /** Epoch milliseconds of `^-?[0-9]{1,16}$` text (Spark's rlike: `find`), else null. */
    private static Long epochMs(String text) {
        return text != null && EPOCH_MS.matcher(text).find() ? SparkText.bigint(text) : null;
    }

    private static boolean inRange(Long ms) {
        return ms != null && Math.abs(ms) < EPOCH_MS_LIMIT;
    }

    /** Spark's trim: spaces only. */
    private static String trimSpaces(String text) {
        if (text == null) {
            return null;
        }
        int start = 0;
        int end = text.length();
        while (start < end && text.charAt(start) == ' ') {
            start++;
        }
        while (end > start && text.charAt(end - 1) == ' ') {
            end--;
        }
        return text.substring(start, end);
    }
}
