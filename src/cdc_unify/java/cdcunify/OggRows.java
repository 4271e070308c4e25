package cdcunify;

import static cdcunify.StagedRow.reason;

import java.math.BigInteger;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.ResolverStyle;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF2;

/**
 * SQL function `cdc_ogg_rows(value, source_tz)`: a landed Oracle GoldenGate for Big Data JSON
 * operation (docs/dialects/ogg_json.md) read once and turned into its staged row, so that
 * stg_ogg_json__changes is this function, an explode and the staged select. One message is one
 * operation; each value is decided on its own.
 *
 * Returns `OGG_ROWS` of src/cdc_unify/jvm.py: one struct. An operation that cannot be staged has
 * its reason and nothing decoded; a null value (a tombstone) has nothing at all. The JSON is read as
 * the SQL model before it read it, through a variant whose numbers are strings of their digits:
 * nested objects with their keys in UTF-16 order, a lone surrogate as '?'. GoldenGate sends no
 * column types, so every value is kept as sent and typed 'string'.
 */
public final class OggRows implements UDF2<byte[], String, List<Row>> {
    private static final long serialVersionUID = 1L;

    /** The decoded columns of a row, event_kind to natural_id (OGG_ROWS). */
    private static final int WIDTH = 18;
    private static final Map<String, String> OPS = Map.of("I", "INSERT", "INSERT", "INSERT", "U", "UPDATE", "UPDATE",
            "UPDATE", "D", "DELETE", "DELETE", "DELETE", "T", "TRUNCATE", "TRUNCATE", "TRUNCATE");
    private static final String MISSING = "_isMissing";
    private static final Pattern WALL_CLOCK =
            Pattern.compile("^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,9})?$");
    private static final Pattern POSITION = Pattern.compile("^[0-9]{1,30}$");
    /** Spark's cast of `yyyy-MM-dd HH:mm:ss[.f{1,6}]` text to a timestamp: a real date and time or nothing. */
    private static final DateTimeFormatter WALL = new DateTimeFormatterBuilder()
            .appendPattern("uuuu-MM-dd HH:mm:ss")
            .optionalStart().appendFraction(ChronoField.MICRO_OF_SECOND, 1, 6, true).optionalEnd()
            .toFormatter().withResolverStyle(ResolverStyle.STRICT);

    @Override
    public List<Row> call(byte[] value, String sourceTz) {
        ZoneId zone = ZoneId.of(sourceTz, ZoneId.SHORT_IDS);
        return JsonDocument.staged(value, WIDTH, document -> new Operation(document, zone));
    }

    /** One operation's fields, as the SQL's records, metadata, operations and images read them. */
    private static final class Operation implements JsonDocument.Message {
        /** The message as parsed, for its natural id. */
        final Map<String, Object> document;
        final Map<String, Object> message;
        final String opCode;
        final String rowOp;
        final String qualifiedTable;
        final List<String> nameParts;
        final String opTsText;
        final String currentTsText;
        final Long changeMicros;
        final Long formattedMicros;
        final String pos;
        final BigInteger posNumber;
        final List<String> primaryKeys;
        final Image before;
        final Image after;

        Operation(JsonDocument document, ZoneId zone) {
            this.document = document.parsed();
            message = document.message();
            opCode = ExactJson.text(message.get("op_type"));
            rowOp = opCode == null ? null : OPS.get(opCode);
            qualifiedTable = ExactJson.text(message.get("table"));
            nameParts = qualifiedTable == null ? null : List.of(qualifiedTable.split("[.]", -1));
            opTsText = ExactJson.text(message.get("op_ts"));
            currentTsText = ExactJson.text(message.get("current_ts"));
            changeMicros = utcMicros(opTsText, zone);
            formattedMicros = utcMicros(currentTsText, zone);
            pos = ExactJson.text(message.get("pos"));
            posNumber = SparkText.foundNumber(POSITION, pos);
            primaryKeys = ExactJson.textArray(message.get("primary_keys"));
            before = new Image(ExactJson.object(message.get("before")), "UPDATE".equals(rowOp) || "DELETE".equals(rowOp));
            after = new Image(ExactJson.object(message.get("after")), "INSERT".equals(rowOp) || "UPDATE".equals(rowOp));
        }

        private boolean present(String field) {
            return ExactJson.present(message.get(field));
        }

        @Override
        public String[] error() {
            String nestedName = ExactJson.firstNested(message, "op_type", "table", "op_ts", "current_ts", "pos");
            boolean writes = "INSERT".equals(rowOp) || "UPDATE".equals(rowOp);
            if (nestedName != null) {
                return reason("wrong_shape", nestedName + " is a JSON object or array, not a scalar");
            } else if (!present("op_type")) {
                return reason("missing_field", "op_type is missing");
            } else if (rowOp == null) {
                return reason("unknown_op", "op_type " + opCode + " is not I, U, D, T or their full names");
            } else if (qualifiedTable == null || qualifiedTable.isEmpty()) {
                return reason("missing_field", "table is missing");
            } else if (nameParts.size() > 3 || nameParts.contains("")) {
                return reason("wrong_shape", "table " + qualifiedTable + " is not [CATALOG.][SCHEMA.]TABLE");
            } else if (writes && !present("after")) {
                return reason("missing_field", "after is missing for op_type " + opCode);
            } else if (writes && after.struct == null) {
                return reason("wrong_shape", "after is not an object");
            } else if (rowOp.equals("DELETE") && !present("before")) {
                return reason("missing_field", "before is missing for op_type " + opCode);
            } else if (before.used && present("before") && before.struct == null) {
                return reason("wrong_shape", "before is not an object");
            }
            return valueError();
        }

        private String[] valueError() {
            if (present("primary_keys") && primaryKeys == null) {
                return reason("wrong_shape", "primary_keys is not an array of column names");
            } else if (opTsText != null && changeMicros == null) {
                return reason("invalid_timestamp", "op_ts " + opTsText + " is not YYYY-MM-DD HH:MM:SS[.ffffff]");
            } else if (currentTsText != null && formattedMicros == null) {
                return reason("invalid_timestamp", "current_ts " + currentTsText + " is not YYYY-MM-DD[T]HH:MM:SS[.ffffff]");
            } else if (pos != null && posNumber == null) {
                return reason("wrong_shape", "pos " + pos + " is not a trail position (digits)");
            } else if (!before.nested.isEmpty()) {
                return reason("invalid_value", "before values are JSON objects/arrays, not column values: " + before.nested);
            } else if (!after.nested.isEmpty()) {
                return reason("invalid_value", "after values are JSON objects/arrays, not column values: " + after.nested);
            }
            return null;
        }

        /** The operation's staged row. */
        @Override
        public List<Row> rows() {
            Map<String, String> beforeValues = before.values;
            Map<String, String> afterValues = after.values;
            int parts = nameParts.size();
            return List.of(StagedRow.decoded(0,
                    rowOp.equals("TRUNCATE") ? "DDL" : "ROW", rowOp,
                    parts >= 2 ? nameParts.get(0) : null, parts == 3 ? nameParts.get(1) : null, nameParts.get(parts - 1),
                    primaryKeys == null ? List.of() : primaryKeys,
                    primaryKeys != null && !primaryKeys.isEmpty() ? "message" : "none",
                    beforeValues, afterValues, beforeIsPartial(), afterValues == null ? null : after.hasMissing() || rowOp.equals("UPDATE"),
                    CanonicalImage.sentTypes(beforeValues, afterValues),
                    changeMicros, changeMicros == null ? null : precision(opTsText), formattedMicros,
                    pos, posNumber == null ? null : posNumber.toString(), naturalId(document)));
        }

        /** A before image with columns flagged missing, or an UPDATE's before holding fewer columns
         * than its after (a compressed update's keys only). */
        private Boolean beforeIsPartial() {
            Map<String, String> beforeValues = before.values;
            if (beforeValues == null) {
                return null;
            }
            Map<String, String> afterValues = after.values;
            return before.hasMissing() || rowOp.equals("UPDATE") && afterValues != null
                    && !beforeValues.keySet().containsAll(afterValues.keySet());
        }
    }

    /** One image (before or after): its columns without the `<column>_isMissing` flags and the
     * columns they flag; `used` when the operation reads it. */
    private static final class Image {
        final Map<String, Object> struct;
        final boolean used;
        final List<String> missing = new ArrayList<>();
        /** The image's values as sent when the operation reads it, else null. */
        final Map<String, String> values;
        /** The read image's columns holding an object or array, joined by ", ". */
        final String nested;

        Image(Map<String, Object> struct, boolean used) {
            this.struct = struct;
            this.used = used;
            Map<String, Object> columns = new LinkedHashMap<>();
            if (struct != null) {
                struct.forEach((column, value) -> {
                    if (isFlag(column, value) && (Boolean) value) {
                        missing.add(column);
                    }
                });
                struct.forEach((column, value) -> {
                    if (!isFlag(column, value) && !missing.contains(column + MISSING)) {
                        columns.put(column, value);
                    }
                });
            }
            values = used && struct != null ? ExactJson.textMap(columns) : null;
            nested = values == null ? "" : ExactJson.nestedKeys(columns);
        }

        /** `<column>_isMissing`, a JSON boolean, next to its column (a source column that merely
         * ends in _isMissing stays a column). */
        private boolean isFlag(String column, Object value) {
            return column.endsWith(MISSING) && value instanceof Boolean
                    && struct.containsKey(column.substring(0, column.length() - MISSING.length()));
        }

        boolean hasMissing() {
            return !missing.isEmpty();
        }
    }

    /** A zone-less wall clock (`T` or a space between date and time) in the source zone as epoch
     * microseconds, digits past the microsecond dropped; null for any other text or an impossible
     * date or time. A time in a gap of the zone moves forward by the gap, one in an overlap takes
     * the earlier offset (Spark's to_utc_timestamp). */
    private static Long utcMicros(String text, ZoneId zone) {
        if (text == null || !WALL_CLOCK.matcher(text).find()) {
            return null;
        }
        String wall = text.replace('T', ' ');
        // the first 26 characters, a final line terminator `$` let through trimmed as Spark's cast trims it
        return WallClock.utcMicros(wall.substring(0, Math.min(26, wall.length())).replaceFirst("[\r\n]+$", ""), WALL, zone);
    }

    /** The unit of the wall clock's last digit: s, ms, us or ns. */
    private static String precision(String text) {
        int dot = text.lastIndexOf('.');
        if (dot < 0) {
            return "s";
        }
        int digits = text.length() - dot - 1;
        return digits <= 3 ? "ms" : digits <= 6 ? "us" : "ns";
    }

    /** SHA-256 of the operation without current_ts (when the formatter ran: a replay of the trail
     * gives the same operation another one): each top-level field's text as JSON, in the order
     * Spark's variant keeps them (UTF-16 order of the keys as sent, each written as Spark holds it). */
    private static String naturalId(Map<String, Object> document) {
        List<String> keys = new ArrayList<>(document.keySet());
        keys.sort(String::compareTo);
        List<String> names = new ArrayList<>(keys.size());
        List<String> texts = new ArrayList<>(keys.size());
        for (String key : keys) {
            String stored = SparkText.asSpark(key);
            if (!stored.equals("current_ts")) {
                names.add(stored);
                texts.add(ExactJson.text(SparkText.tree(document.get(key))));
            }
        }
        return SparkText.sha2(ExactJson.textFields(names, texts));
    }
}
