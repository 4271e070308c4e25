package cdcunify;

import static cdcunify.StagedRow.reason;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.types.variant.Variant;
import org.apache.spark.types.variant.VariantBuilder;
import org.apache.spark.types.variant.VariantUtil;

/**
 * SQL function `cdc_maxwell_rows(value, key)`: a landed Maxwell's daemon JSON message
 * (docs/dialects/maxwell_json.md) and its Kafka key read once and turned into its staged row, so
 * that stg_maxwell_json__changes is this function, an explode and the staged select. One message is
 * one change; each value is decided on its own.
 *
 * Returns `MAXWELL_ROWS` of src/cdc_unify/jvm.py: one struct. A message that cannot be staged has
 * its reason and nothing decoded; a null value (a tombstone) has nothing at all. The JSON is read as
 * the SQL model before it read it (JsonDocument). Maxwell sends no column types: every value is kept
 * as sent, an embedded JSON value (a JSON column, a SET) as compact JSON with its numbers as sent
 * (ExactJson.embeddedJson). The op (`message_op`) of a DDL is left null: the model classifies
 * its statement with the shared SQL macro cdc_ddl_op.
 */
public final class MaxwellRows implements UDF2<byte[], byte[], List<Row>> {
    private static final long serialVersionUID = 1L;

    /** The decoded columns of a row, event_kind to ddl_statement (MAXWELL_ROWS). */
    private static final int WIDTH = 17;
    private static final Map<String, String> ROW_OPS =
            Map.of("insert", "INSERT", "update", "UPDATE", "delete", "DELETE", "bootstrap-insert", "SNAPSHOT");
    private static final Set<String> DDL_TYPES = Set.of(
            "table-create", "table-alter", "table-drop", "database-create", "database-alter", "database-drop");
    private static final Set<String> BOOTSTRAP_MARKERS = Set.of("bootstrap-start", "bootstrap-complete");
    private static final Pattern TS = Pattern.compile("^-?[0-9]{1,15}$");
    private static final Pattern POSITION = Pattern.compile("^(.*):([0-9]{1,18})$");
    private static final Pattern XOFFSET = Pattern.compile("^[0-9]{1,9}$");
    private static final Pattern FILE_INDEX = Pattern.compile("([0-9]+)$");
    private static final Pattern HASH_KEY = Pattern.compile("^\\s*\\{");
    private static final Pattern ARRAY_KEY = Pattern.compile("^\\s*\\[");
    /** Spark's from_json reader: single quotes and NaN/Infinity allowed (JSONOptions' defaults). */
    private static final JsonFactory FROM_JSON = JsonFactory.builder()
            .enable(com.fasterxml.jackson.core.json.JsonReadFeature.ALLOW_SINGLE_QUOTES)
            .enable(com.fasterxml.jackson.core.json.JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .build();
    private static final BigInteger TO_OFFSET = BigInteger.valueOf(4_294_967_296L);
    private static final BigInteger TO_XOFFSET = BigInteger.valueOf(1_000_000_000L);
    private static final BigInteger LAST_ROW = BigInteger.valueOf(999_999_999L);

    @Override
    public List<Row> call(byte[] value, byte[] key) {
        return JsonDocument.staged(value, WIDTH, document -> new Change(document.message(), key));
    }

    /** One message's fields, as the SQL's message_fields, classified, key_columns and images read them. */
    private static final class Change implements JsonDocument.Message {
        final Map<String, Object> message;
        final String maxwellType;
        final String rowOp;
        final boolean isDdl;
        final boolean isBootstrapMarker;
        final String database;
        final String table;
        final String tsText;
        final BigInteger tsNumber;
        final String positionText;
        final String binlogFile;
        final Long binlogOffset;
        final String xoffsetText;
        final BigInteger xoffsetNumber;
        final Object dataJson;
        final Map<String, Object> data;
        final Object oldJson;
        final Map<String, Object> old;
        final List<String> messageKeyColumns;
        final List<String> foundKeyColumns;
        /** The Kafka key's names that no column of data answers to (element_at of an empty array, or
         * map_keys of an empty object, failed the old SQL's build). */
        final List<String> unmatchedKeyNames = new ArrayList<>();

        Change(Map<String, Object> message, byte[] key) {
            this.message = message;
            String type = text("type");
            maxwellType = type == null ? null : type.toLowerCase(Locale.ROOT);
            rowOp = maxwellType == null ? null : ROW_OPS.get(maxwellType);
            isDdl = maxwellType != null && DDL_TYPES.contains(maxwellType);
            isBootstrapMarker = maxwellType != null && BOOTSTRAP_MARKERS.contains(maxwellType);
            database = text("database");
            table = text("table");
            tsText = text("ts");
            tsNumber = SparkText.foundNumber(TS, tsText);
            positionText = text("position");
            Matcher position = positionText == null ? null : POSITION.matcher(positionText);
            boolean positioned = position != null && position.find();
            binlogFile = positioned ? position.group(1) : positionText == null ? null : "";
            binlogOffset = positioned ? SparkText.tryBigint(position.group(2)) : null;
            xoffsetText = text("xoffset");
            xoffsetNumber = SparkText.foundNumber(XOFFSET, xoffsetText);
            dataJson = message.get("data");
            data = ExactJson.object(dataJson);
            oldJson = message.get("old");
            old = ExactJson.object(oldJson);
            messageKeyColumns = ExactJson.textArray(message.get("primary_key_columns"));
            foundKeyColumns = keyColumns(key);
        }

        private String text(String field) {
            return ExactJson.text(message.get(field));
        }

        /** The key columns: the message's primary_key_columns, else the names the Kafka key gives (matched
         * back to the row's spelling), else a table DDL's def.primary-key. */
        private List<String> keyColumns(byte[] key) {
            List<KeyName> kafkaNames = rowOp == null || key == null ? null : kafkaKeyNames(new String(key, StandardCharsets.UTF_8));
            if (messageKeyColumns != null) {
                if (kafkaNames != null && kafkaNames.stream().anyMatch(KeyName::emptyObject)) {
                    unmatchedKeyNames.add("{}");
                }
                return messageKeyColumns;
            }
            if (kafkaNames != null && !kafkaNames.isEmpty()) {
                List<String> names = new ArrayList<>(kafkaNames.size());
                for (KeyName name : kafkaNames) {
                    if (name.emptyObject()) {
                        unmatchedKeyNames.add("{}");
                    } else {
                        names.add(rowSpelling(name.name()));
                    }
                }
                return names;
            }
            if (isDdl && maxwellType.startsWith("table-")) {
                return ExactJson.textArray(ExactJson.at(message.get("def"), "primary-key"));
            }
            return null;
        }

        /** The data column named as the Kafka key names it, Maxwell having lower-cased it there; a
         * name no column answers to is unmatched. */
        private String rowSpelling(String name) {
            if (data == null) {
                return name;
            }
            if (name != null) {
                String lower = name.toLowerCase(Locale.ROOT);
                for (String column : data.keySet()) {
                    if (column.toLowerCase(Locale.ROOT).equals(lower)) {
                        return column;
                    }
                }
            }
            unmatchedKeyNames.add(name == null ? "null" : name);
            return null;
        }

        @Override
        public String[] error() {
            boolean row = rowOp != null;
            String nestedName = ExactJson.firstNested(message, "type", "database", "table");
            if (!ExactJson.present(message.get("type"))) {
                return reason("missing_field", "type is missing");
            } else if (nestedName != null) {
                return reason("wrong_shape", nestedName + " is a JSON object/array, not a name");
            } else if (!row && !isDdl && !isBootstrapMarker) {
                return reason("unknown_op", "type " + maxwellType + " is not a Maxwell row, DDL or bootstrap type");
            } else if (database == null || database.isEmpty()) {
                return reason("missing_field", "database is missing");
            } else if ((row || maxwellType.startsWith("table-") || isBootstrapMarker) && (table == null || table.isEmpty())) {
                return reason("missing_field", "table is missing for type " + maxwellType);
            } else if (tsText == null) {
                return reason("missing_field", "ts is missing");
            } else if (eventMicros() == null) {
                return reason("invalid_timestamp", "ts " + tsText + " is not epoch seconds (rows) or milliseconds (DDL)");
            } else if (row && !ExactJson.present(dataJson)) {
                return reason("missing_field", "data is missing for type " + maxwellType);
            } else if (row && data == null) {
                return reason("wrong_shape", "data is not a JSON object");
            } else if (row && ExactJson.present(oldJson) && old == null) {
                return reason("wrong_shape", "old is not a JSON object");
            }
            return fieldError(row);
        }

        private String[] fieldError(boolean row) {
            if (isDdl && text("sql") == null) {
                return reason("missing_field", "sql is missing for DDL type " + maxwellType);
            } else if (positionText != null && binlogOffset == null) {
                return reason("wrong_shape", "position " + positionText + " is not binlog-file:offset");
            } else if (xoffsetText != null && xoffsetNumber == null) {
                return reason("wrong_shape", "xoffset " + xoffsetText + " is not a row offset");
            } else if (ExactJson.present(message.get("primary_key_columns")) && messageKeyColumns == null) {
                return reason("wrong_shape", "primary_key_columns is not an array of column names");
            } else if (row && !oldOnlyColumns().isEmpty()) {
                return reason("invalid_value", "old names columns that data does not have: " + oldOnlyColumns());
            } else if (!unmatchedKeyNames.isEmpty()) {
                return reason("invalid_value",
                        "the Kafka key names key columns that data does not have: " + String.join(", ", unmatchedKeyNames));
            }
            return null;
        }

        /** ts as epoch microseconds: seconds for rows and bootstrap markers, milliseconds for DDL (as the
         * dataformat page's samples send them); null when it is no such time. */
        private Long eventMicros() {
            if (tsNumber == null) {
                return null;
            }
            try {
                return Math.multiplyExact(tsNumber.longValueExact(), isDdl ? 1_000L : 1_000_000L);
            } catch (ArithmeticException e) {
                return null;
            }
        }

        private String oldOnlyColumns() {
            List<String> names = new ArrayList<>();
            if (old != null && data != null) {
                for (String column : old.keySet()) {
                    if (!data.containsKey(column)) {
                        names.add(column);
                    }
                }
            }
            return String.join(", ", names);
        }

        @Override
        public List<Row> rows() {
            // update: `data` is the whole row after, `old` the previous values of the columns that changed,
            // so the row before is `data` with `old` laid over it (the dataformat page's data.merge(old))
            Map<String, Object> beforeColumns = null;
            if ("UPDATE".equals(rowOp)) {
                beforeColumns = new LinkedHashMap<>();
                for (Map.Entry<String, Object> column : data.entrySet()) {
                    if (old == null || !old.containsKey(column.getKey())) {
                        beforeColumns.put(column.getKey(), column.getValue());
                    }
                }
                if (old != null) {
                    beforeColumns.putAll(old);
                }
            } else if ("DELETE".equals(rowOp)) {
                beforeColumns = data;
            }
            Map<String, Object> afterColumns = rowOp != null && !rowOp.equals("DELETE") ? data : null;
            Map<String, String> before = imageValues(beforeColumns);
            Map<String, String> after = imageValues(afterColumns);
            boolean keyed = foundKeyColumns != null && !foundKeyColumns.isEmpty();
            String eventKind = rowOp != null ? "ROW" : isDdl ? "DDL" : "OTHER";
            return List.of(StagedRow.decoded(0,
                    eventKind, rowOp != null ? rowOp : isDdl ? null : maxwellType.toUpperCase(Locale.ROOT),
                    database, SparkText.nullIfEmpty(table),
                    foundKeyColumns == null ? List.of() : foundKeyColumns, !keyed ? "none" : isDdl ? "ddl" : "message",
                    before, after, before == null ? null : false, after == null ? null : false,
                    rowOp == null ? null : CanonicalImage.sentTypes(before, after),
                    eventMicros(), isDdl ? "ms" : "s", positionText != null ? positionText : text("gtid"), text("xid"),
                    positionDigits(), isDdl ? text("sql") : null));
        }

        /** An image as column -> text as sent: a scalar's exact text, an embedded JSON value's
         * compact JSON with every number as sent (ExactJson.embeddedJson: a variant would round a
         * number past 38 digits to a double and write 1E400 as "Infinity"). */
        private Map<String, String> imageValues(Map<String, Object> columns) {
            if (columns == null) {
                return null;
            }
            Map<String, String> texts = new LinkedHashMap<>();
            for (Map.Entry<String, Object> column : columns.entrySet()) {
                Object field = column.getValue();
                texts.put(column.getKey(), ExactJson.nested(field) ? ExactJson.embeddedJson(field) : ExactJson.text(field));
            }
            return texts;
        }

        /** Binlog file index * 2^32 + offset, then the row's place in its transaction: Maxwell gives the
         * rows of one binlog event one position, numbers them with xoffset and leaves xoffset off the
         * transaction's last row (commit: true), which sorts after the others. */
        private String positionDigits() {
            if (binlogOffset == null) {
                return null;
            }
            Matcher index = FILE_INDEX.matcher(binlogFile);
            Long fileIndex = SparkText.tryBigint(index.find() ? index.group(1) : "");
            if (fileIndex == null) {
                return null;
            }
            BigInteger position = BigInteger.valueOf(fileIndex).multiply(TO_OFFSET).add(BigInteger.valueOf(binlogOffset));
            return position.multiply(TO_XOFFSET).add(xoffsetNumber != null ? xoffsetNumber : LAST_ROW).toString();
        }
    }

    /** A name of a Kafka key: null for an element that is not an object; `emptyObject` for `{}`. */
    record KeyName(String name, boolean emptyObject) {}

    /** The key column names of a Kafka key, Maxwell's hash form `{"database":..,"table":..,"pk.<col>":..}`
     * (from_json's map: the names in text order) or array form `["db","table",[{"<col>":..}]]` (each
     * element's first name as Spark stores and sorts them); a key without `pk.` names (`_uuid`: the
     * table has no key) names none. Null when the key is neither form or cannot be read. */
    static List<KeyName> kafkaKeyNames(String keyText) {
        if (HASH_KEY.matcher(keyText).find()) {
            List<String> names = fromJsonKeys(keyText);
            if (names == null) {
                return null;
            }
            List<KeyName> columns = new ArrayList<>();
            for (String name : names) {
                if (name.startsWith("pk.")) {
                    columns.add(new KeyName(name.substring(3), false));
                }
            }
            return columns;
        }
        if (ARRAY_KEY.matcher(keyText).find()) {
            return arrayKeyNames(parseVariant(keyText));
        }
        return null;
    }

    /** map_keys(from_json(text, 'map<string, string>')): the object's names in text order, as Spark
     * holds them; null when the text is no JSON object. */
    private static List<String> fromJsonKeys(String text) {
        try (JsonParser parser = FROM_JSON.createParser(text)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            List<String> names = new ArrayList<>();
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                names.add(SparkText.asSpark(parser.currentName()));
                parser.nextToken();
                parser.skipChildren();
            }
            return names;
        } catch (IOException e) {
            return null;
        }
    }

    /** transform(try_variant_get(key, '$[2]', 'array<map<string, variant>>'), pk -> map_keys(pk)[0]). */
    private static List<KeyName> arrayKeyNames(Variant key) {
        if (key == null || key.getType() != VariantUtil.Type.ARRAY || key.arraySize() < 3) {
            return null;
        }
        Variant columns = key.getElementAtIndex(2);
        if (columns.getType() != VariantUtil.Type.ARRAY) {
            return null;
        }
        List<KeyName> names = new ArrayList<>(columns.arraySize());
        for (int i = 0; i < columns.arraySize(); i++) {
            Variant column = columns.getElementAtIndex(i);
            if (column.getType() != VariantUtil.Type.OBJECT) {
                names.add(new KeyName(null, false));
            } else if (column.objectSize() == 0) {
                names.add(new KeyName(null, true));
            } else {
                names.add(new KeyName(firstStoredKey(column), false));
            }
        }
        return names;
    }

    /** The least key of an object as Spark stores its keys (a lone surrogate as '?'). */
    private static String firstStoredKey(Variant object) {
        String first = null;
        for (int i = 0; i < object.objectSize(); i++) {
            String stored = SparkText.asSpark(object.getFieldAtIndex(i).key);
            if (first == null || stored.compareTo(first) < 0) {
                first = stored;
            }
        }
        return first;
    }

    /** try_parse_json: Spark's own variant of the text, null when it is no JSON value Spark reads. */
    private static Variant parseVariant(String text) {
        try {
            return VariantBuilder.parseJson(text, false);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The object's field, null when it is no object or has no such field. */
    private static Variant field(Variant object, String name) {
        return object == null || object.getType() != VariantUtil.Type.OBJECT ? null : object.getFieldByKey(name);
    }
}
