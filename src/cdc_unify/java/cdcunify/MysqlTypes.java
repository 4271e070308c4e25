package cdcunify;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Declared column types of the MySQL-family tools -> logical types (canonicalizers/_mysql_types.py,
 * with the Canal and OMS Canal overrides of canal_json.py and oms_canal_json.py): MySQL-style type
 * text (`int(11)`, `bigint(20) unsigned`, `decimal(12,2)`) or `jdbc:<code>` (java.sql.Types).
 */
final class MysqlTypes {
    private MysqlTypes() {}

    private static final Map<Integer, String> JDBC = Map.ofEntries(
            Map.entry(-7, "boolean"), Map.entry(16, "boolean"), Map.entry(-6, "tinyint"), Map.entry(5, "smallint"),
            Map.entry(4, "int"), Map.entry(-5, "bigint"), Map.entry(2, "decimal"), Map.entry(3, "decimal"),
            Map.entry(7, "float"), Map.entry(6, "double"), Map.entry(8, "double"), Map.entry(91, "date"),
            Map.entry(92, "time"), Map.entry(93, "datetime"), Map.entry(2014, "timestamp"), Map.entry(-2, "binary"),
            Map.entry(-3, "binary"), Map.entry(-4, "binary"), Map.entry(2004, "binary"));
    /** MySQL integer type -> {signed, unsigned} logical type: unsigned needs the next width. */
    private static final Map<String, String[]> INTEGERS = Map.of(
            "tinyint", new String[] {"tinyint", "smallint"}, "smallint", new String[] {"smallint", "int"},
            "mediumint", new String[] {"int", "int"}, "int", new String[] {"int", "bigint"},
            "integer", new String[] {"int", "bigint"}, "bigint", new String[] {"bigint", "ubigint"},
            "int64", new String[] {"bigint", "ubigint"});
    private static final Map<String, String> NAMED = Map.ofEntries(
            Map.entry("bool", "boolean"), Map.entry("boolean", "boolean"), Map.entry("double", "double"),
            Map.entry("double precision", "double"), Map.entry("real", "double"), Map.entry("binary_float", "float"),
            Map.entry("binary_double", "double"), Map.entry("char", "string"), Map.entry("varchar", "string"),
            Map.entry("character", "string"), Map.entry("character varying", "string"), Map.entry("nchar", "string"),
            Map.entry("nvarchar", "string"), Map.entry("varchar2", "string"), Map.entry("nvarchar2", "string"),
            Map.entry("tinytext", "string"), Map.entry("text", "string"), Map.entry("mediumtext", "string"),
            Map.entry("longtext", "string"), Map.entry("enum", "string"), Map.entry("set", "string"),
            Map.entry("clob", "string"), Map.entry("json", "json"), Map.entry("binary", "binary"),
            Map.entry("varbinary", "binary"), Map.entry("tinyblob", "binary"), Map.entry("blob", "binary"),
            Map.entry("mediumblob", "binary"), Map.entry("longblob", "binary"), Map.entry("bytea", "binary"),
            Map.entry("raw", "binary"), Map.entry("date", "date"), Map.entry("time", "time"),
            Map.entry("datetime", "datetime"), Map.entry("timestamp", "timestamp"),
            Map.entry("timestamp without time zone", "datetime"),
            Map.entry("timestamp with local time zone", "timestamp"),
            Map.entry("timestamp with time zone", "zoned_datetime"), Map.entry("year", "int"),
            Map.entry("interval year to month", "interval_ym"), Map.entry("interval day to second", "interval_ds"));
    private static final List<String> DECIMAL_NAMES = List.of("decimal", "numeric", "dec", "fixed", "number");
    private static final Pattern ARGS = Py.regex("\\(([^)]*)\\)");
    private static final Pattern JDBC_CODE = Py.regex("jdbc:(-?\\d{1,9})", Pattern.UNICODE_CHARACTER_CLASS);
    private static final Pattern BIT_FIELD = Py.regex("bit\\s*\\(\\s*(\\d+)\\s*\\)", Pattern.UNICODE_CHARACTER_CLASS);

    /** `bigint(20) unsigned zerofill` -> name `bigint`, args [20], unsigned; lower case. */
    record TypeText(String name, List<String> args, boolean unsigned) {}

    static TypeText split(String typeText) {
        String text = Py.strip(typeText).toLowerCase(Locale.ROOT);
        List<String> args = new ArrayList<>();
        Matcher m = ARGS.matcher(text);
        while (m.find()) {
            for (String arg : m.group(1).split(",", -1)) {
                if (!Py.strip(arg).isEmpty()) {
                    args.add(Py.strip(arg));
                }
            }
        }
        List<String> words = new ArrayList<>();
        for (String word : Py.split(ARGS.matcher(text).replaceAll(" "))) {
            words.add(word);
        }
        List<String> kept = words.stream().filter(w -> !List.of("unsigned", "signed", "zerofill").contains(w)).toList();
        return new TypeText(String.join(" ", kept), args, words.contains("unsigned"));
    }

    private static boolean isDigits(String text) {
        return !text.isEmpty() && text.codePoints().allMatch(c -> Character.getType(c) == Character.DECIMAL_DIGIT_NUMBER);
    }

    /** Logical type of a MySQL-style type text; null when not known. */
    static String mysql(String typeText) {
        if (typeText == null || typeText.isEmpty()) {
            return null;
        }
        TypeText type = split(typeText);
        String name = type.name();
        List<String> args = type.args();
        if (INTEGERS.containsKey(name)) {
            if (name.equals("tinyint") && args.equals(List.of("1"))) {
                return "boolean";
            }
            return INTEGERS.get(name)[type.unsigned() ? 1 : 0];
        }
        if (name.equals("number") && args.isEmpty()) {
            return "decimal";
        }
        if (DECIMAL_NAMES.contains(name)) {
            BigInteger precision = !args.isEmpty() && isDigits(args.get(0)) ? Py.number(args.get(0)) : BigInteger.TEN;
            BigInteger scale = args.size() > 1 && isDigits(args.get(1)) ? Py.number(args.get(1)) : BigInteger.ZERO;
            return "decimal(" + precision + "," + scale + ")";
        }
        if (name.equals("float")) {
            boolean wide = args.size() == 1 && isDigits(args.get(0)) && Py.number(args.get(0)).compareTo(BigInteger.valueOf(24)) > 0;
            return wide ? "double" : "float";
        }
        if (name.equals("bit")) {
            return args.isEmpty() || args.equals(List.of("1")) ? "boolean" : null;
        }
        return NAMED.get(name);
    }

    /** The java.sql.Types code of a `jdbc:<code>` source type, else null. */
    static Integer jdbcCode(String sourceType) {
        if (sourceType == null || sourceType.isEmpty()) {
            return null;
        }
        Matcher m = JDBC_CODE.matcher(Py.strip(sourceType));
        return m.matches() ? Integer.valueOf(Integer.parseInt(m.group(1))) : null;
    }

    /** Logical type of a declared source type (type text or `jdbc:<code>`); `string` if unknown. */
    static String source(String sourceType) {
        Integer code = jdbcCode(sourceType);
        if (code != null) {
            return JDBC.getOrDefault(code, "string");
        }
        String logical = mysql(sourceType);
        return logical != null ? logical : "string";
    }

    /** Canal: BIT(n > 1) is sent as its number. */
    static String canal(String sourceType) {
        Matcher m = BIT_FIELD.matcher(Py.strip(sourceType == null ? "" : sourceType).toLowerCase(Locale.ROOT));
        if (m.matches() && Py.number(m.group(1)).compareTo(BigInteger.ONE) > 0) {
            return "ubigint";
        }
        return source(sourceType);
    }

    /** OMS: BIT is base64 bytes, a `decimal` without arguments has no known precision, jdbc 6 is FLOAT. */
    static String oms(String sourceType) {
        Integer code = jdbcCode(sourceType);
        if (code != null) {
            return code == -7 ? "binary" : code == 6 ? "float" : source(sourceType);
        }
        TypeText type = split(sourceType == null ? "" : sourceType);
        if (type.name().equals("bit")) {
            return "binary";
        }
        if (type.name().equals("decimal") && type.args().isEmpty()) {
            return "decimal";
        }
        return source(sourceType);
    }
}
