package cdcunify;

import static cdcunify.StagedRow.reason;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF3;

/**
 * SQL function `cdc_canal_rows(dialect, value, source_tz)`: a landed Canal FlatMessage value
 * (spec 004: one FlatMessage object or a JSON array of them; OMS Canal, spec 003, has the same
 * shape) read once and turned into its staged rows, so that the Canal staging models are this
 * function, an explode and the staged select (docs/dialects/canal_json.md). Each value is decided
 * on its own, so the model needs no window over the landing rows and no shuffle.
 *
 * Returns `CANAL_ROWS` of src/cdc_unify/jvm.py: one struct per `data[i]` of every ROW message and
 * one per other message, `row_index` counting them across the value. A value with any unreadable
 * part (the value, a message, or a column value its declared type cannot read) is ONE struct,
 * `row_index` 0, with the first reason in row order and nothing decoded; a null value (a
 * tombstone) one struct with nothing at all. Images go through the dialect's value decoder
 * (CanonicalImage) with the message's declared types.
 */
public final class CanalRows implements UDF3<String, byte[], String, List<Row>> {
    private static final long serialVersionUID = 1L;

    /** The unit of an epoch number by its digit count: 10-digit seconds and 13-digit
     * milliseconds both occur. Matched with `find`, as Spark's `rlike` does. */
    private static final Pattern[] UNIT_PATTERNS = {
        Pattern.compile("^[0-9]{1,11}$"), Pattern.compile("^[0-9]{12,14}$"),
        Pattern.compile("^[0-9]{15,17}$"), Pattern.compile("^[0-9]{18,19}$"),
    };
    private static final String[] UNITS = {"s", "ms", "us", "ns"};
    /** The decoded columns of a row, event_kind to ddl_statement (CANAL_ROWS). */
    private static final int WIDTH = 16;

    @Override
    public List<Row> call(String dialect, byte[] value, String sourceTz) {
        if (value == null) {
            return StagedRow.tombstone(WIDTH);
        }
        String text = ExactJson.utf8(value);
        if (text == null) {
            return StagedRow.quarantined("invalid_utf8", "the value is not valid UTF-8", WIDTH);
        }
        Object document = ExactJson.parse(text);
        if (document == null) {
            return StagedRow.quarantined("invalid_json", "the value is not valid JSON (RFC 8259; duplicate keys are rejected too)", WIDTH);
        }
        boolean isArray = document instanceof List;
        List<?> elements = isArray ? (List<?>) document : document instanceof Map ? List.of(document) : null;
        if (elements == null) {
            return StagedRow.quarantined("wrong_shape", "the JSON value is neither a FlatMessage object nor an array of them", WIDTH);
        }
        if (elements.isEmpty()) {
            return StagedRow.quarantined("wrong_shape", "the JSON array holds no FlatMessage", WIDTH);
        }
        List<Message> messages = new ArrayList<>(elements.size());
        for (int i = 0; i < elements.size(); i++) {
            Map<String, Object> object = ExactJson.object(elements.get(i));
            Message message = object == null ? null : new Message(object);
            String[] error = message == null ? new String[] {"wrong_shape", "the element is not a JSON object"} : message.error();
            if (error != null) {
                return StagedRow.quarantined(error[0], isArray ? "message " + i + ": " + error[1] : error[1], WIDTH);
            }
            messages.add(message);
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            String failure = messages.get(i).stage(dialect, sourceTz, rows, isArray ? "message " + i : null);
            if (failure != null) {
                return StagedRow.quarantined("invalid_value", failure, WIDTH);
            }
        }
        return rows;
    }

    /** One FlatMessage's fields, read as the model's checks and columns use them. */
    private static final class Message {
        final String canalType;
        final String eventKind;
        final String databaseText;
        final String tableText;
        final String nestedName;
        final String sqlText;
        final String gtidText;
        final String esText;
        final String tsText;
        final String esUnit;
        final Long esMicros;
        final Long tsMicros;
        final Map<String, Object> fields;
        final List<Map<String, String>> dataRows;
        final List<Map<String, String>> oldRows;
        final List<String> pkNames;
        final Map<String, String> mysqlTypes;
        final Map<String, String> sqlTypes;
        final List<Map<String, String>> tableChangeColumns;

        Message(Map<String, Object> message) {
            fields = message;
            canalType = ExactJson.text(message.get("type"));
            String isDdl = ExactJson.text(message.get("isDdl"));
            eventKind = eventKind(canalType, isDdl == null ? null : isDdl.toLowerCase(java.util.Locale.ROOT));
            databaseText = ExactJson.text(message.get("database"));
            tableText = ExactJson.text(message.get("table"));
            nestedName = ExactJson.nested(message.get("database")) ? "database"
                    : ExactJson.nested(message.get("table")) ? "table" : null;
            sqlText = ExactJson.text(message.get("sql"));
            gtidText = ExactJson.text(message.get("gtid"));
            esText = ExactJson.text(message.get("es"));
            tsText = ExactJson.text(message.get("ts"));
            esUnit = epochUnit(esText);
            esMicros = epochMicros(esText, esUnit);
            tsMicros = epochMicros(tsText, epochUnit(tsText));
            dataRows = ExactJson.textMaps(message.get("data"));
            oldRows = ExactJson.textMaps(message.get("old"));
            pkNames = ExactJson.textArray(message.get("pkNames"));
            mysqlTypes = ExactJson.textMap(message.get("mysqlType"));
            sqlTypes = ExactJson.textMap(message.get("sqlType"));
            tableChangeColumns = ExactJson.textMaps(ExactJson.at(message.get("tableChanges"), "table", "columns"));
        }

        private boolean has(String field) {
            return ExactJson.present(fields.get(field));
        }

        private String nested(String field) {
            return ExactJson.nestedColumns(fields.get(field));
        }

        /** The first reason, in this order, that makes the message (and so its value) a quarantine
         * row: {error_code, error_detail}; null when it can be staged. */
        String[] error() {
            boolean row = "ROW".equals(eventKind);
            boolean ddl = "DDL".equals(eventKind);
            boolean update = "UPDATE".equals(canalType);
            if (!has("type")) {
                return reason("missing_field", "type is missing");
            } else if (eventKind == null) {
                return reason("unknown_op", "type " + canalType + " is not a Canal EventType");
            } else if (nestedName != null) {
                return reason("wrong_shape", nestedName + " is a JSON object/array, not a name");
            } else if (row && blank(databaseText)) {
                return reason("missing_field", "database is missing");
            } else if (row && blank(tableText)) {
                return reason("missing_field", "table is missing");
            } else if (row && !has("data")) {
                return reason("missing_field", "data is missing for " + canalType);
            } else if (row && (dataRows == null || dataRows.contains(null))) {
                return reason("wrong_shape", "data is not an array of row objects");
            } else if (row && dataRows.isEmpty()) {
                return reason("missing_field", "data holds no row for " + canalType);
            } else if (update && has("old") && (oldRows == null || oldRows.contains(null))) {
                return reason("wrong_shape", "old is not an array of row objects");
            } else if (update && oldRows != null && oldRows.size() > dataRows.size()) {
                return reason("wrong_shape", "old holds " + oldRows.size() + " rows but data only " + dataRows.size());
            } else if (has("pkNames") && pkNames == null) {
                return reason("wrong_shape", "pkNames is not an array of names");
            } else if (has("mysqlType") && mysqlTypes == null) {
                return reason("wrong_shape", "mysqlType is not an object");
            } else if (has("sqlType") && sqlTypes == null) {
                return reason("wrong_shape", "sqlType is not an object");
            } else if (has("tableChanges") && tableChangeColumns == null) {
                return reason("wrong_shape", "tableChanges.table.columns is not an array of column objects");
            }
            return laterError(row, ddl, update);
        }

        private String[] laterError(boolean row, boolean ddl, boolean update) {
            if (ddl && sqlText == null) {
                return reason("missing_field", "sql is missing for DDL type " + canalType);
            } else if ((row || ddl) && esText == null) {
                return reason("missing_field", "es (execution time) is missing");
            } else if (esText != null && esMicros == null) {
                return reason("invalid_timestamp", "es " + esText + " is not epoch seconds/milliseconds");
            } else if (tsText != null && tsMicros == null) {
                return reason("invalid_timestamp", "ts " + tsText + " is not epoch seconds/milliseconds");
            } else if (row && !nested("data").isEmpty()) {
                return reason("invalid_value", "data values are JSON objects/arrays, not column values: " + nested("data"));
            } else if (update && !nested("old").isEmpty()) {
                return reason("invalid_value", "old values are JSON objects/arrays, not column values: " + nested("old"));
            }
            return null;
        }

        /** Appends the message's staged rows; returns the reason its value fails (an image its
         * decoder cannot read: `invalid_value`), or null. */
        String stage(String dialect, String sourceTz, List<Row> rows, String messageLabel) {
            if ("ROW".equals(eventKind)) {
                return stageRows(dialect, sourceTz, rows, messageLabel);
            }
            Map<String, String> ddlTypes = "DDL".equals(eventKind) && tableChangeColumns != null
                    ? SparkText.asSpark(tableChangeTypes()) : null;
            CanonicalImage.Image after = ddlTypes == null ? CanonicalImage.Image.NONE
                    : CanonicalImage.image(dialect, Map.of(), ddlTypes, sourceTz);
            if (after.error() != null) {
                return failure(messageLabel, 0, CanonicalImage.Image.NONE, after);
            }
            List<String> keys = "DDL".equals(eventKind) ? SparkText.distinct(ExactJson.textArray(
                    ExactJson.at(fields.get("tableChanges"), "table", "primaryKeyColumnNames")), true) : List.of();
            rows.add(StagedRow.decoded(rows.size(), columns(keys, null, null, ddlTypes, after.types())));
            return null;
        }

        private String stageRows(String dialect, String sourceTz, List<Row> rows, String messageLabel) {
            Map<String, String> declared = SparkText.asSpark(rowSourceTypes());
            List<String> keys = SparkText.distinct(pkNames, true);
            for (int r = 0; r < dataRows.size(); r++) {
                Map<String, String> data = SparkText.asSpark(dataRows.get(r));
                Map<String, String> old = "UPDATE".equals(canalType) && oldRows != null && r < oldRows.size()
                        ? SparkText.asSpark(oldRows.get(r)) : null;
                Map<String, String> beforeValues = switch (canalType) {
                    case "UPDATE" -> SparkText.union(data, old);
                    case "DELETE" -> data;
                    default -> null;
                };
                Map<String, String> afterValues = canalType.equals("INSERT") || canalType.equals("UPDATE") ? data : null;
                CanonicalImage.Image before = CanonicalImage.image(dialect, beforeValues, declared, sourceTz);
                CanonicalImage.Image after = CanonicalImage.image(dialect, afterValues, declared, sourceTz);
                if (before.error() != null || after.error() != null) {
                    return failure(messageLabel, r, before, after);
                }
                rows.add(StagedRow.decoded(rows.size(), columns(keys, before, after, declared, SparkText.union(before.types(), after.types()))));
            }
            return null;
        }

        /** The decoded columns of a staged row, from event_kind to ddl_statement (CANAL_ROWS). */
        private Object[] columns(List<String> keys, CanonicalImage.Image before, CanonicalImage.Image after,
                Map<String, String> sourceTypes, Map<String, String> types) {
            boolean row = before != null;
            return new Object[] {
                eventKind, op(canalType), SparkText.nullIfEmpty(databaseText), SparkText.nullIfEmpty(tableText), keys,
                row ? before.values() : null, row ? after.values() : null,
                row && before.values() != null ? Boolean.FALSE : null, row && after.values() != null ? Boolean.FALSE : null,
                sourceTypes, types, esMicros, esUnit, tsMicros, SparkText.nullIfEmpty(gtidText),
                "DDL".equals(eventKind) ? sqlText : null,
            };
        }

        /** mysqlType, then for a column only sqlType names its java.sql.Types code as `jdbc:<code>`. */
        private Map<String, String> rowSourceTypes() {
            Map<String, String> jdbc = null;
            if (sqlTypes != null) {
                jdbc = new LinkedHashMap<>();
                for (Map.Entry<String, String> entry : sqlTypes.entrySet()) {
                    jdbc.put(entry.getKey(), entry.getValue() == null ? null : "jdbc:" + entry.getValue());
                }
            }
            Map<String, String> mysql = null;
            if (mysqlTypes != null) {
                mysql = new LinkedHashMap<>(mysqlTypes);
                mysql.values().removeIf(declared -> declared == null);
            }
            return SparkText.union(jdbc, mysql);
        }

        /** CloudCanal tableChanges columns: name -> typeExpression, else typeName, else
         * jdbc:<jdbcType>; a repeated name keeps its last definition, placed last. */
        private Map<String, String> tableChangeTypes() {
            Map<String, String> types = new LinkedHashMap<>();
            for (Map<String, String> column : tableChangeColumns) {
                String name = column == null ? null : column.get("name");
                if (name == null) {
                    continue;
                }
                String declared = column.get("typeExpression");
                if (declared == null) {
                    declared = column.get("typeName");
                }
                if (declared == null && column.get("jdbcType") != null) {
                    declared = "jdbc:" + column.get("jdbcType");
                }
                types.remove(name);
                types.put(name, declared);
            }
            return types;
        }
    }

    private static String failure(String messageLabel, int rowInMessage, CanonicalImage.Image before, CanonicalImage.Image after) {
        List<String> parts = new ArrayList<>(4);
        if (messageLabel != null) {
            parts.add(messageLabel);
        }
        parts.add("row " + rowInMessage);
        if (before.error() != null) {
            parts.add("before: " + before.error());
        }
        if (after.error() != null) {
            parts.add("after: " + after.error());
        }
        return String.join("; ", parts);
    }


    /** Canal EventType / EntryType names -> staged event kind; null = unknown type. QUERY is a DDL
     * statement unless the message says isDdl false (a plain query event). */
    static String eventKind(String canalType, String isDdl) {
        if (canalType == null) {
            return null;
        }
        return switch (canalType) {
            case "INSERT", "UPDATE", "DELETE" -> "ROW";
            case "QUERY" -> "false".equals(isDdl) ? "OTHER" : "DDL";
            case "CREATE", "ALTER", "ERASE", "TRUNCATE", "RENAME", "CINDEX", "DINDEX" -> "DDL";
            case "GTID", "XACOMMIT", "XAROLLBACK", "TRANSACTIONBEGIN", "TRANSACTIONEND" -> "TRANSACTION";
            case "MHEARTBEAT", "HEARTBEAT" -> "HEARTBEAT";
            default -> null;
        };
    }

    /** The staged op: DDL types in the contract's names, every other type as sent. */
    static String op(String canalType) {
        return switch (canalType) {
            case "ERASE" -> "DROP";
            case "CINDEX" -> "CREATE_INDEX";
            case "DINDEX" -> "DROP_INDEX";
            default -> canalType;
        };
    }

    static String epochUnit(String text) {
        if (text == null) {
            return null;
        }
        for (int i = 0; i < UNIT_PATTERNS.length; i++) {
            if (UNIT_PATTERNS[i].matcher(text).find()) {
                return UNITS[i];
            }
        }
        return null;
    }

    /** Microseconds since the epoch, as `timestamp_seconds|millis|micros(try_cast(text as bigint))`
     * (nanoseconds `div 1000`); null where Spark's is. */
    static Long epochMicros(String text, String unit) {
        if (unit == null) {
            return null;
        }
        Long number = SparkText.bigint(text);
        if (number == null) {
            return null;
        }
        return switch (unit) {
            case "s" -> number * 1_000_000L;
            case "ms" -> number * 1_000L;
            case "us" -> number;
            default -> number / 1_000L;
        };
    }

    private static boolean blank(String text) {
        return text == null || text.isEmpty();
    }
}
