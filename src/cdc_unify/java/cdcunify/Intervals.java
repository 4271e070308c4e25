package cdcunify;

import java.math.BigInteger;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Interval texts -> ISO-8601 durations (canonicalizers/_value_text.py `parse_interval`, whose
 * docstring lists the forms: SQL literals, Oracle's TO_CHAR forms, ISO durations). A literal or an
 * Oracle form says its family (year-month, day-second); an ISO duration is judged by its parts.
 */
final class Intervals {
    private Intervals() {}

    /** Months and nanoseconds; `family` "ym"/"ds" when the form says, null for an ISO duration. */
    private record Interval(BigInteger months, BigInteger nanos, String family) {}

    private static final List<String> YM_UNITS = List.of("YEAR", "MONTH");
    private static final List<String> DS_UNITS = List.of("DAY", "HOUR", "MINUTE", "SECOND");
    private static final Map<String, Long> NANOS_PER = Map.of(
            "DAY", 86_400_000_000_000L, "HOUR", 3_600_000_000_000L, "MINUTE", 60_000_000_000L, "SECOND", 1_000_000_000L);
    private static final Map<String, Integer> FIELD_LIMITS = Map.of("MONTH", 12, "HOUR", 24, "MINUTE", 60, "SECOND", 60);
    private static final BigInteger BILLION = BigInteger.valueOf(1_000_000_000);
    private static final BigInteger MAX_DAYS = BigInteger.valueOf(999_999_999);

    private static final int FLAGS = Pattern.UNICODE_CHARACTER_CLASS;
    private static final String NUMBER = "\\d{1,18}";
    private static final String UNIT_ARGS = "(?:\\s*\\(\\s*\\d+\\s*(?:,\\s*\\d+\\s*)?\\))?";
    private static final Pattern LITERAL = Py.regex(
            "(?<outer>[+-])?\\s*INTERVAL\\s*(?:'(?<quoted>[^']*)'|(?<=\\s)(?<bare>[+-]?[0-9][0-9.]{0,30}))\\s*"
                    + "(?<start>[A-Z_]+)" + UNIT_ARGS + "(?:\\s+TO\\s+(?<end>[A-Z]+)" + UNIT_ARGS + ")?",
            FLAGS | Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE);
    private static final Pattern ORACLE_YM = Py.regex("([+-])?(" + NUMBER + ")-(" + NUMBER + ")", FLAGS);
    private static final Pattern ORACLE_DS = Py.regex(
            "([+-])?(" + NUMBER + ") (" + NUMBER + "):(" + NUMBER + "):(" + NUMBER + "(?:\\.\\d{1,9})?)", FLAGS);
    private static final String PART = "([-+]?" + NUMBER + ")";
    private static final Pattern ISO = Py.regex("(-)?P(?:" + PART + "Y)?(?:" + PART + "M)?(?:" + PART + "W)?(?:"
            + PART + "D)?(?:T(?:" + PART + "H)?(?:" + PART + "M)?(?:([-+]?" + NUMBER + "(?:\\.\\d{1,9})?)S)?)?", FLAGS);
    private static final Pattern FIELD = Py.regex(NUMBER + "(?:\\.\\d{1,9})?", FLAGS);
    private static final Pattern FIELD_SEPARATOR = Py.regex("[ :-]");

    /** Canonical text (`P1Y2M`) of a year-to-month interval. */
    static String yearMonth(String text) {
        Interval interval = parse(text);
        if ("ds".equals(interval.family()) || interval.nanos().signum() != 0) {
            throw new CanonicalError(Py.repr(text) + " is not a year-to-month interval");
        }
        BigInteger months = interval.months();
        BigInteger[] parts = months.abs().divideAndRemainder(BigInteger.valueOf(12));
        boolean years = parts[0].signum() != 0;
        String body = (years ? parts[0] + "Y" : "") + (parts[1].signum() != 0 || !years ? parts[1] + "M" : "");
        return (months.signum() < 0 ? "-" : "") + "P" + body;
    }

    /** Canonical text (`P3DT4H5M6.5S`) of a day-to-second interval. */
    static String daySecond(String text) {
        Interval interval = parse(text);
        if ("ym".equals(interval.family()) || interval.months().signum() != 0) {
            throw new CanonicalError(Py.repr(text) + " is not a day-to-second interval");
        }
        return fromNanos(interval.nanos());
    }

    private static String fromNanos(BigInteger total) {
        BigInteger[] split = total.abs().divideAndRemainder(BILLION);
        BigInteger whole = split[0];
        int fraction = split[1].intValueExact();
        BigInteger[] days = whole.divideAndRemainder(BigInteger.valueOf(86_400));
        if (days[0].compareTo(MAX_DAYS) > 0) {
            throw new CanonicalError("an interval of " + whole + " seconds is out of range");
        }
        int rest = days[1].intValueExact();
        int h = rest / 3600;
        int m = rest / 60 % 60;
        int s = rest % 60;
        String frac = CanonicalText.fraction(fraction);
        String time = (h != 0 ? h + "H" : "") + (m != 0 ? m + "M" : "") + (s != 0 || !frac.isEmpty() ? s + frac + "S" : "");
        String sign = total.signum() < 0 ? "-" : "";
        if (days[0].signum() == 0 && time.isEmpty()) {
            return sign + "PT0S";
        }
        return sign + "P" + (days[0].signum() != 0 ? days[0] + "D" : "") + (time.isEmpty() ? "" : "T" + time);
    }

    private static Interval parse(String text) {
        String body = Py.strip(text);
        Interval parsed = literal(body);
        if (parsed == null) {
            parsed = oracle(body);
        }
        if (parsed == null) {
            parsed = iso(body);
        }
        if (parsed == null) {
            throw new CanonicalError(Py.repr(text) + " is not an interval literal or duration");
        }
        return parsed;
    }

    private static Interval literal(String body) {
        Matcher m = LITERAL.matcher(body);
        if (!m.matches()) {
            return null;
        }
        List<String> units = units(m.group("start").toUpperCase(Locale.ROOT),
                m.group("end") == null ? "" : m.group("end").toUpperCase(Locale.ROOT));
        String value = m.group("quoted") != null ? m.group("quoted") : m.group("bare");
        value = Py.strip(value);
        int sign = 1;
        if (value.startsWith("+") || value.startsWith("-")) {
            sign = value.startsWith("-") ? -1 : 1;
            value = Py.strip(value.substring(1));
        }
        List<String> fields = units.size() > 1 ? List.of(FIELD_SEPARATOR.split(value, -1)) : List.of(value);
        if (fields.size() != units.size() || !fields.stream().allMatch(f -> FIELD.matcher(f).matches())) {
            throw new CanonicalError("interval value " + Py.repr(value) + " does not match its " + units.size()
                    + "-field qualifier");
        }
        boolean lastTakesFraction = units.get(units.size() - 1).equals("SECOND");
        boolean innerFraction = fields.subList(0, fields.size() - 1).stream().anyMatch(f -> f.contains("."));
        if (innerFraction || (fields.get(fields.size() - 1).contains(".") && !lastTakesFraction)) {
            throw new CanonicalError("interval value " + Py.repr(value) + " has a fraction in a field that takes none");
        }
        if ("-".equals(m.group("outer"))) {
            sign = -sign;
        }
        return amount(units, fields, sign);
    }

    /** The unit of every field of the literal, leading field first. */
    private static List<String> units(String start, String end) {
        if ((start.equals("QUARTER") || start.equals("WEEK")) && end.isEmpty()) {
            return List.of(start);
        }
        if (start.contains("_") && end.isEmpty()) { // MySQL compound units: DAY_HOUR, SECOND_MICROSECOND
            end = start.substring(start.indexOf('_') + 1);
            start = start.substring(0, start.indexOf('_'));
        }
        if (end.equals("MICROSECOND")) {
            end = "SECOND";
        }
        if (start.equals("MICROSECOND") && end.isEmpty()) {
            return List.of("MICROSECOND");
        }
        for (List<String> family : List.of(YM_UNITS, DS_UNITS)) {
            if (family.contains(start) && (end.isEmpty() || family.contains(end))) {
                int first = family.indexOf(start);
                int last = family.indexOf(end.isEmpty() ? start : end);
                if (last >= first) {
                    return family.subList(first, last + 1);
                }
            }
        }
        throw new CanonicalError("unsupported interval qualifier " + start + (end.isEmpty() ? "" : " TO " + end));
    }

    private static Interval amount(List<String> units, List<String> fields, int sign) {
        String first = units.get(0);
        BigInteger signed = BigInteger.valueOf(sign);
        if (first.equals("QUARTER") || first.equals("WEEK")) {
            BigInteger count = Py.number(fields.get(0)).multiply(BigInteger.valueOf(first.equals("QUARTER") ? 3 : 7));
            return amount(List.of(first.equals("QUARTER") ? "MONTH" : "DAY"), List.of(count.toString()), sign);
        }
        if (first.equals("MICROSECOND")) {
            return new Interval(BigInteger.ZERO, signed.multiply(Py.number(fields.get(0))).multiply(BigInteger.valueOf(1000)), "ds");
        }
        for (int i = 1; i < units.size(); i++) {
            String field = fields.get(i);
            String whole = field.contains(".") ? field.substring(0, field.indexOf('.')) : field;
            if (Py.number(whole).compareTo(BigInteger.valueOf(FIELD_LIMITS.get(units.get(i)))) >= 0) {
                throw new CanonicalError("interval field " + units.get(i) + " = " + field + " is out of range");
            }
        }
        if (YM_UNITS.contains(first)) {
            BigInteger months = BigInteger.ZERO;
            for (int i = 0; i < units.size(); i++) {
                months = months.add(Py.number(fields.get(i)).multiply(BigInteger.valueOf(units.get(i).equals("YEAR") ? 12 : 1)));
            }
            return new Interval(signed.multiply(months), BigInteger.ZERO, "ym");
        }
        BigInteger nanos = BigInteger.ZERO;
        for (int i = 0; i < units.size(); i++) {
            String field = fields.get(i);
            int point = field.indexOf('.');
            String whole = point < 0 ? field : field.substring(0, point);
            String fraction = point < 0 ? null : field.substring(point + 1);
            nanos = nanos.add(Py.number(whole).multiply(BigInteger.valueOf(NANOS_PER.get(units.get(i)))))
                    .add(BigInteger.valueOf(CanonicalText.nanosOf(fraction)));
        }
        return new Interval(BigInteger.ZERO, signed.multiply(nanos), "ds");
    }

    private static Interval oracle(String body) {
        Matcher m = ORACLE_YM.matcher(body);
        if (m.matches()) {
            return amount(YM_UNITS, List.of(m.group(2), m.group(3)), "-".equals(m.group(1)) ? -1 : 1);
        }
        m = ORACLE_DS.matcher(body);
        if (m.matches()) {
            return amount(DS_UNITS, List.of(m.group(2), m.group(3), m.group(4), m.group(5)), "-".equals(m.group(1)) ? -1 : 1);
        }
        return null;
    }

    private static BigInteger part(Matcher m, int group) {
        String text = m.group(group);
        if (text == null) {
            return BigInteger.ZERO;
        }
        boolean negative = text.startsWith("-");
        BigInteger value = Py.number(text.startsWith("-") || text.startsWith("+") ? text.substring(1) : text);
        return negative ? value.negate() : value;
    }

    private static Interval iso(String body) {
        Matcher m = ISO.matcher(body);
        if (!m.matches() || body.equals("P") || body.equals("-P") || body.endsWith("T")) {
            return null;
        }
        BigInteger sign = BigInteger.valueOf(m.group(1) != null ? -1 : 1);
        BigInteger months = part(m, 2).multiply(BigInteger.valueOf(12)).add(part(m, 3));
        BigInteger days = part(m, 4).multiply(BigInteger.valueOf(7)).add(part(m, 5));
        BigInteger nanos = days.multiply(BigInteger.valueOf(NANOS_PER.get("DAY")))
                .add(part(m, 6).multiply(BigInteger.valueOf(NANOS_PER.get("HOUR"))))
                .add(part(m, 7).multiply(BigInteger.valueOf(NANOS_PER.get("MINUTE"))));
        String seconds = m.group(8);
        if (seconds != null) {
            nanos = nanos.add(new java.math.BigDecimal(Py.ascii(seconds)).movePointRight(9).toBigInteger());
        }
        return new Interval(sign.multiply(months), sign.multiply(nanos), null);
    }
}
