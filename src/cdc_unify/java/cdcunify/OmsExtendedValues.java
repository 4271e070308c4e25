package cdcunify;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * OMS DefaultExtendColumnType images (canonicalizers/oms_default_ext_json.py, spec 003): each
 * column's `__light_type` schemaType; the shared text forms, except that a DATETIME (and an Oracle
 * DATE) with a zone is a zoned datetime and a TIMESTAMP may be epoch seconds. A column without a
 * schemaType is kept as sent; a schemaType without a value still types its column.
 */
final class OmsExtendedValues {
    private OmsExtendedValues() {}

    private static final Map<String, String> SCHEMA_TYPES = CanonicalImage.typeTable(
            "tinyint: TINYINT", "smallint: SMALLINT|YEAR", "int: MEDIUMINT|INT|INTEGER", "bigint: INT64|LONG",
            "ubigint: BIGINT", "boolean: BOOL|BOOLEAN", "decimal: DECIMAL|NUMERIC|NUMBER|BIGDECIMAL",
            "float: FLOAT|BINARY_FLOAT", "double: DOUBLE|BINARY_DOUBLE",
            "string: CHAR|NCHAR|VARCHAR|VARCHAR2|NVARCHAR2|TINYTEXT|TEXT|MEDIUMTEXT|LONGTEXT|ENUM|SET|CLOB|NCLOB|ROWID|UROWID|STRING",
            "json: JSON", "binary: TINYBLOB|BLOB|MEDIUMBLOB|LONGBLOB|BINARY|VARBINARY|BIT|RAW|BFILE|BYTES", "date: DATE",
            "time: TIME", "datetime: DATETIME", "timestamp: TIMESTAMP",
            "zoned_datetime: ZONED_DATETIME|TIMESTAMP_WITH_TIME_ZONE|TIMESTAMP_WITH_LOCAL_TIME_ZONE",
            "interval_ym: INTERVAL_YEAR_TO_MONTH", "interval_ds: INTERVAL_DAY_TO_SECOND");

    private static final int UNICODE = Pattern.UNICODE_CHARACTER_CLASS;
    private static final Pattern TYPE = Py.regex(
            "\\s*([A-Za-z][A-Za-z0-9_ ]*?)\\s*(?:\\(\\s*(\\d+)\\s*(?:,\\s*(\\d+)\\s*)?\\))?\\s*", UNICODE);
    private static final Pattern BLANKS = Py.regex("[\\s_]+", UNICODE);
    private static final Pattern EPOCH = Py.regex("-?\\d+(?:\\.\\d+)?", UNICODE);

    /** The logical type a schemaType declares (`decimal(10, 2)` -> `decimal(10,2)`; unknown names `string`). */
    static String logicalType(String schemaType) {
        String text = schemaType == null ? "" : schemaType;
        Matcher m = TYPE.matcher(text);
        if (!m.matches()) {
            return SCHEMA_TYPES.getOrDefault(Py.strip(text).toUpperCase(Locale.ROOT), "string");
        }
        String name = BLANKS.matcher(Py.strip(m.group(1))).replaceAll("_").toUpperCase(Locale.ROOT);
        String logical = SCHEMA_TYPES.getOrDefault(name, "string");
        if (logical.equals("decimal") && m.group(2) != null) {
            return "decimal(" + Py.integer(m.group(2)) + "," + (m.group(3) == null ? "0" : Py.integer(m.group(3))) + ")";
        }
        return logical;
    }

    private static final UnaryOperator<String> LOGICAL_TYPE = CanonicalImage.cached(OmsExtendedValues::logicalType);

    static CanonicalImage.Decoded decode(Map<String, String> values, Map<String, String> declared, String sourceTz) {
        Map<String, String> types = new LinkedHashMap<>();
        declared.forEach((column, type) -> types.put(column, LOGICAL_TYPE.apply(type)));
        Map<String, String> canonical = new LinkedHashMap<>();
        values.forEach((column, text) -> {
            String schemaType = declared.get(column);
            if (schemaType == null) {
                canonical.put(column, text);
                types.put(column, "string");
            } else if (text == null) {
                canonical.put(column, null);
            } else {
                try {
                    String[] read = read(types.get(column), text, sourceTz);
                    canonical.put(column, read[0]);
                    types.put(column, read[1]);
                } catch (CanonicalError error) {
                    throw CanonicalImage.columnError(column, schemaType, error);
                }
            }
        });
        return new CanonicalImage.Decoded(canonical, types);
    }

    /** {canonical text, logical type}: a declared decimal(p,s) stays the column's type. */
    private static String[] read(String declared, String text, String sourceTz) {
        String base = declared.startsWith("decimal") ? "decimal" : declared;
        return switch (base) {
            case "date" -> Py.len(Py.strip(text)) > 10 // an Oracle DATE is sent in the DateTime form
                    ? Zoned.zoned(text, null) : new String[] {CanonicalText.dateText(text), "date"};
            case "datetime" -> Zoned.zoned(text, null);
            case "timestamp" -> EPOCH.matcher(Py.strip(text)).matches()
                    ? new String[] {Zoned.epochText(Py.strip(text), 9, "s"), "timestamp"} : Zoned.zoned(text, null);
            case "zoned_datetime" -> Zoned.zoned(text, sourceTz);
            case "decimal" -> new String[] {CanonicalText.decimal(text), declared};
            default -> new String[] {CanonicalText.read(base, text, sourceTz), base};
        };
    }
}
