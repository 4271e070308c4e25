package cdcunify;

import java.math.BigInteger;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * OMS "Dataworks" 2.0 images (canonicalizers/oms_dataworks_json.py, spec 003): the type names of
 * the spec's samples or source type text; the value decides between the readings a declared type
 * allows (a DATETIME is epoch ms with 9 nanosecond digits, a zoned or a wall-clock text; a
 * TIMESTAMP epoch seconds or a datetime text), and may refine its column's type. Both maps in key
 * order.
 */
final class OmsDataWorksValues {
    private OmsDataWorksValues() {}

    private static final Map<String, String> LOGICAL_BY_TYPE = CanonicalImage.typeTable(
            "tinyint: TINYINT", "smallint: SMALLINT", "int: MEDIUMINT|INT|INTEGER|INT32", "bigint: INT64|BIGINT|LONG",
            "boolean: BOOLEAN|BOOL", "decimal: DECIMAL|NUMERIC|NUMBER|BIGDECIMAL", "float: FLOAT|BINARY_FLOAT|FLOAT32",
            "double: DOUBLE|BINARY_DOUBLE|REAL|FLOAT64", "json: JSON",
            "binary: BLOB|TINYBLOB|MEDIUMBLOB|LONGBLOB|BINARY|VARBINARY|BYTES|RAW|LONG RAW|BFILE|BIT", "date: DATE",
            "time: TIME", "datetime: DATETIME", "timestamp: TIMESTAMP",
            "zoned_datetime: ZONED_DATETIME|TIMESTAMP WITH TIME ZONE|TIMESTAMP WITH LOCAL TIME ZONE",
            "interval_ds: INTERVAL_DAY_TO_SECOND|INTERVAL DAY TO SECOND",
            "interval_ym: INTERVAL_YEAR_TO_MONTH|INTERVAL YEAR TO MONTH");

    private static final int UNICODE = Pattern.UNICODE_CHARACTER_CLASS;
    private static final Pattern PARAMS = Py.regex("\\(\\s*(\\d+)?\\s*(?:,\\s*(\\d+)\\s*)?\\)", UNICODE);
    private static final Pattern UNSIGNED = Py.regex(
            "\\s+(UNSIGNED|ZEROFILL)\\b", UNICODE | Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE);
    private static final Pattern ZONED = Py.regex("(" + CanonicalText.DATETIME_TEXT + ")\\s+(\\S+)", UNICODE);
    private static final Pattern EPOCH = Py.regex("-?\\d+(?:\\.\\d+)?", UNICODE);

    /** `decimal(10,2)` -> `decimal(10,2)`, `INT64` -> `bigint`, `bigint unsigned` -> `ubigint`, unknown -> `string`. */
    static String logicalType(String declared) {
        String text = Py.strip(declared == null ? "" : declared);
        Matcher params = PARAMS.matcher(text);
        boolean hasParams = params.find();
        boolean unsigned = UNSIGNED.matcher(text).find();
        String bare = UNSIGNED.matcher(PARAMS.matcher(text).replaceAll("")).replaceAll("").toUpperCase(Locale.ROOT);
        String name = String.join(" ", Py.split(bare));
        String logical = LOGICAL_BY_TYPE.getOrDefault(name, "string");
        if (logical.equals("bigint") && unsigned) {
            return "ubigint";
        }
        if (logical.equals("decimal") && hasParams && params.group(1) != null && params.group(2) != null) {
            return "decimal(" + Py.integer(params.group(1)) + "," + Py.integer(params.group(2)) + ")";
        }
        return logical;
    }

    private static final UnaryOperator<String> LOGICAL_TYPE = CanonicalImage.cached(OmsDataWorksValues::logicalType);

    static CanonicalImage.Decoded decode(Map<String, String> values, Map<String, String> declared, String sourceTz) {
        return CanonicalImage.readEach(values, declared, LOGICAL_TYPE, OmsDataWorksValues::read);
    }

    /** {canonical text, logical type of this value}. */
    private static String[] read(String logical, String text) {
        if (logical.startsWith("decimal")) {
            return new String[] {CanonicalText.decimal(text), logical};
        }
        return switch (logical) {
            case "date" -> date(text);
            case "datetime" -> anyDatetime(text, true);
            case "timestamp" -> anyDatetime(text, false);
            case "zoned_datetime" -> zoned(text);
            default -> new String[] {CanonicalText.read(logical, text, null), logical};
        };
    }

    private static String[] wallClock(String text) {
        return new String[] {CanonicalText.datetime(CanonicalText.parseDatetime(text)), "datetime"};
    }

    /** `2020-11-25 00:01:02.012345 Asia/Shanghai` -> the UTC instant with the zone kept (an offset as `+0800`). */
    private static String[] zoned(String text) {
        Matcher m = ZONED.matcher(Py.strip(text));
        if (!m.matches()) {
            throw new CanonicalError(Py.repr(text) + " is not `YYYY-MM-DD HH:MM:SS[.f] zone`");
        }
        CanonicalText.Wall wall = CanonicalText.parseDatetime(m.group(1));
        ZoneId zone = Zoned.zone(m.group(2));
        String label = zone instanceof ZoneOffset offset ? percentZ(offset) : zone.getId();
        return new String[] {Zoned.instant(wall, zone) + "[" + label + "]", "zoned_datetime"};
    }

    /** strftime's `%z`: `+0800`. */
    private static String percentZ(ZoneOffset offset) {
        int total = offset.getTotalSeconds();
        int magnitude = Math.abs(total);
        return String.format("%s%02d%02d", total < 0 ? "-" : "+", magnitude / 3600, magnitude / 60 % 60);
    }

    private static String[] epoch(String text, boolean millis) {
        CanonicalText.decimalValue(text);
        return new String[] {millis ? Zoned.epochText(text, 6, "ms") : Zoned.epochText(text, 9, "s"), "timestamp"};
    }

    /** The overall format's DATETIME `1590315269000.123456789`: epoch milliseconds whose fraction is
     * the nanosecond of the second. */
    private static String[] epochMillisWithNanos(String text) {
        int point = text.indexOf('.');
        String whole = point < 0 ? text : text.substring(0, point);
        String fraction = point < 0 ? "" : text.substring(point + 1);
        if (fraction.isEmpty()) {
            return epoch(whole, true);
        }
        if (Py.len(fraction) != 9) {
            throw new CanonicalError(Py.repr(text) + ": the fraction of epoch ms must be 9 nanosecond digits");
        }
        BigInteger millis = new BigInteger(CanonicalText.integer(whole));
        BigInteger seconds = millis.divide(BigInteger.valueOf(1000));
        if (millis.signum() < 0 && millis.mod(BigInteger.valueOf(1000)).signum() != 0) {
            seconds = seconds.subtract(BigInteger.ONE);
        }
        return epoch(seconds + "." + fraction, false);
    }

    /** Epoch text, a zoned datetime or a wall clock, whichever the text is. */
    private static String[] anyDatetime(String text, boolean millisWithNanos) {
        String stripped = Py.strip(text);
        if (EPOCH.matcher(stripped).matches()) {
            return millisWithNanos ? epochMillisWithNanos(stripped) : epoch(stripped, false);
        }
        if (ZONED.matcher(stripped).matches()) {
            return zoned(stripped);
        }
        return wallClock(stripped);
    }

    private static String[] date(String text) {
        String stripped = Py.strip(text);
        if (Py.len(stripped) > 10) { // an Oracle tenant's DATE has a time of day
            return wallClock(stripped);
        }
        return new String[] {CanonicalText.dateText(stripped), "date"};
    }
}
