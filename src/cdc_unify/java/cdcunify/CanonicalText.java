package cdcunify;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.time.YearMonth;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Canonical text of one value read from the text a CDC tool sent (docs/canonical-text.md): the
 * readers of cdc_unify/canonical.py, same results and same refusal reasons. Most texts already
 * are canonical and come back as sent after one scan; the others are read and written again.
 */
final class CanonicalText {
    private CanonicalText() {}

    // Bounds of cdc_unify.canonical: a message is untrusted, `1e999999999` is a valid number.
    static final int MAX_INTEGER_DIGITS = 1000;
    static final int MAX_DECIMAL_DIGITS = 5000;

    private static final int UNICODE = Pattern.UNICODE_CHARACTER_CLASS;
    private static final String FRACTION = "(?:\\.(\\d{1,9}))?";
    private static final Pattern DATE = Py.regex("(-?\\d{4,})-(\\d{2})-(\\d{2})", UNICODE);
    private static final Pattern TIME = Py.regex("(-)?(\\d{2,3}):(\\d{2}):(\\d{2})" + FRACTION, UNICODE);
    static final String DATETIME_TEXT = "\\d{4}-\\d{2}-\\d{2}[ T]\\d{2}:\\d{2}:\\d{2}(?:\\.\\d{1,9})?";
    private static final Pattern DATETIME = Py.regex(
            "(\\d{4})-(\\d{2})-(\\d{2})[ T](\\d{2}):(\\d{2}):(\\d{2})" + FRACTION, UNICODE);

    /** A zone-less wall clock to the second and its fraction in nanoseconds. */
    record Wall(LocalDateTime time, int nanos) {}

    /** A value of a logical type (`decimal(p,s)` as `decimal`) in the shared text forms
     * (_value_text.TEXT_READERS); `sourceTz` for wall clocks that stand for instants. */
    static String read(String base, String text, String sourceTz) {
        return switch (base) {
            case "string", "json" -> text;
            case "boolean" -> bool(text);
            case "tinyint", "smallint", "int", "bigint", "ubigint" -> integer(text);
            case "decimal" -> decimal(text);
            case "float" -> floatText(text);
            case "double" -> doubleText(text);
            case "binary" -> base64(text);
            case "date" -> dateText(text);
            case "time" -> timeText(text);
            case "datetime" -> datetimeText(text);
            case "timestamp" -> Zoned.instantText(text, sourceTz);
            case "zoned_datetime" -> Zoned.zonedText(text, sourceTz);
            case "interval_ym" -> Intervals.yearMonth(text);
            case "interval_ds" -> Intervals.daySecond(text);
            default -> throw new IllegalStateException("no reader for logical type " + base);
        };
    }

    // ------------------------------------------------------------------ numbers
    /** Integer text (`3`, `-7`, `3.0`, `1E+3`) -> canonical integer text. */
    static String integer(String text) {
        if (isCanonicalInteger(text)) {
            return text;
        }
        Py.Dec value = decimalValue(text);
        if (value.adjusted() >= MAX_INTEGER_DIGITS) {
            throw new CanonicalError(Py.repr(Py.head(text, 40)) + " has more than " + MAX_INTEGER_DIGITS + " digits");
        }
        String digits = value.digits();
        if (value.exponent() < 0) {
            int keep = digits.length() + (int) value.exponent();
            if (!digits.substring(Math.max(keep, 0)).chars().allMatch(c -> c == '0')) {
                throw new CanonicalError(Py.repr(Py.head(text, 40)) + " is not an integer");
            }
            digits = keep > 0 ? digits.substring(0, keep) : "0";
        } else if (!value.isZero()) {
            digits = digits + "0".repeat((int) value.exponent());
        }
        return value.negative() && !digits.equals("0") ? "-" + digits : digits;
    }

    /** `(?:0|-?[1-9][0-9]{0,17})`: its own canonical text. */
    private static boolean isCanonicalInteger(String text) {
        int n = text.length();
        int start = n > 0 && text.charAt(0) == '-' ? 1 : 0;
        if (n == 1 && text.charAt(0) == '0') {
            return true;
        }
        if (n - start < 1 || n - start > 18 || text.charAt(start) < '1' || text.charAt(start) > '9') {
            return false;
        }
        for (int i = start + 1; i < n; i++) {
            if (text.charAt(i) < '0' || text.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    /** Decimal text (`12.50`, `1E+3`) -> canonical decimal text: plain, no trailing fractional zero. */
    static String decimal(String text) {
        if (isCanonicalDecimal(text)) {
            return text;
        }
        String quick = plainDecimal(text);
        if (quick != null) {
            return quick;
        }
        Py.Dec value = decimalValue(text);
        if (value.isZero()) {
            return "0";
        }
        String digits = value.digits();
        long exponent = value.exponent();
        String plain;
        if (exponent >= 0) {
            plain = digits + "0".repeat((int) exponent);
        } else {
            int point = digits.length() + (int) exponent;
            String whole = point > 0 ? digits.substring(0, point) : "0";
            String fraction = point > 0 ? digits.substring(point) : "0".repeat(-point) + digits;
            int end = fraction.length();
            while (end > 0 && fraction.charAt(end - 1) == '0') {
                end--;
            }
            fraction = fraction.substring(0, end);
            plain = fraction.isEmpty() ? whole : whole + "." + fraction;
        }
        return value.negative() ? "-" + plain : plain;
    }

    /** An ASCII `-?digits[.digits]`: where its point and its first and last non-zero digits are
     * (-1 for none). */
    private record Plain(boolean negative, int point, int first, int last) {}

    private static Plain plain(String text, int maxLength) {
        int n = text.length();
        int start = n > 0 && text.charAt(0) == '-' ? 1 : 0;
        if (n > maxLength || n == start) {
            return null;
        }
        int point = -1;
        int first = -1;
        int last = -1;
        for (int i = start; i < n; i++) {
            char c = text.charAt(i);
            if (c == '.' && point < 0 && i > start && i < n - 1) {
                point = i;
            } else if (c < '0' || c > '9') {
                return null;
            } else if (c != '0') {
                first = first < 0 ? i : first;
                last = i;
            }
        }
        return new Plain(start == 1, point, first, last);
    }

    /** Canonical text of a plain decimal of at most 200 characters (leading zeros, trailing
     * fractional zeros, `-0`), read by hand; null for any other text. */
    private static String plainDecimal(String text) {
        Plain p = plain(text, 200);
        if (p == null || p.first() < 0) {
            return p == null ? null : "0";
        }
        int pointAt = p.point() < 0 ? text.length() : p.point();
        String whole = p.first() < pointAt ? text.substring(p.first(), pointAt) : "0";
        String fraction = p.last() > pointAt ? "." + text.substring(pointAt + 1, p.last() + 1) : "";
        return (p.negative() ? "-" : "") + whole + fraction;
    }

    /** `(?:(?:0|-?[1-9][0-9]{0,99})(?:\.[0-9]{0,99}[1-9])?|-0\.[0-9]{0,99}[1-9])`. */
    private static boolean isCanonicalDecimal(String text) {
        int n = text.length();
        int i = n > 0 && text.charAt(0) == '-' ? 1 : 0;
        int wholeStart = i;
        while (i < n && text.charAt(i) >= '0' && text.charAt(i) <= '9') {
            i++;
        }
        int whole = i - wholeStart;
        if (whole == 0 || whole > 100 || (whole > 1 && text.charAt(wholeStart) == '0')) {
            return false;
        }
        boolean zeroWhole = whole == 1 && text.charAt(wholeStart) == '0';
        if (i == n) {
            return !(zeroWhole && wholeStart == 1); // `-0` is not canonical
        }
        if (text.charAt(i) != '.') {
            return false;
        }
        int fractionStart = ++i;
        while (i < n && text.charAt(i) >= '0' && text.charAt(i) <= '9') {
            i++;
        }
        int fraction = i - fractionStart;
        return i == n && fraction >= 1 && fraction <= 100 && text.charAt(n - 1) != '0';
    }

    /** The exact decimal of a text (no float round trip), bounded as cdc_unify.canonical bounds it. */
    static Py.Dec decimalValue(String text) {
        if (Py.len(text) > 2 * MAX_DECIMAL_DIGITS) {
            throw new CanonicalError(Py.repr(Py.head(text, 40)) + "... (" + Py.len(text)
                    + " characters) is too long for a number");
        }
        Py.Dec value = Py.decimal(text);
        if (value == null) {
            throw new CanonicalError(Py.repr(Py.head(text, 40)) + " is not a decimal number");
        }
        if (!value.finite()) {
            throw new CanonicalError(Py.repr(text) + " is not a finite decimal");
        }
        if (Math.abs(value.adjusted()) > MAX_DECIMAL_DIGITS || value.digits().length() > MAX_DECIMAL_DIGITS) {
            throw new CanonicalError(Py.repr(Py.head(value.sciString(), 40)) + " has more than "
                    + MAX_DECIMAL_DIGITS + " digits");
        }
        return value;
    }

    /** A float text as Python's `float(Decimal(text))` reads it; the specials in any case. */
    static double floatValue(String text) {
        String low = Py.strip(text).toLowerCase(java.util.Locale.ROOT);
        switch (low) {
            case "nan":
                return Double.NaN;
            case "infinity", "inf":
                return Double.POSITIVE_INFINITY;
            case "-infinity", "-inf":
                return Double.NEGATIVE_INFINITY;
            default:
                break;
        }
        Py.Dec value = Py.decimal(Py.strip(text));
        if (value == null || "sNaN".equals(value.special())) {
            throw new CanonicalError(Py.repr(text) + " is not a floating-point number");
        }
        if ("NaN".equals(value.special())) {
            return Double.NaN;
        }
        if (!value.finite()) {
            return value.negative() ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
        }
        double magnitude;
        if (value.isZero()) {
            magnitude = 0.0;
        } else if (value.adjusted() > 400) {
            magnitude = Double.POSITIVE_INFINITY;
        } else if (value.adjusted() < -400) {
            magnitude = 0.0;
        } else {
            magnitude = Double.parseDouble(value.digits() + "E" + value.exponent());
        }
        return value.negative() ? -magnitude : magnitude;
    }

    private static String special(double value) {
        if (Double.isNaN(value)) {
            return "NaN";
        }
        if (Double.isInfinite(value)) {
            return value > 0 ? "Infinity" : "-Infinity";
        }
        return null;
    }

    /**
     * `repr(float(text))` read by hand for a plain ASCII decimal (`-?digits[.digits]`) of at most
     * `maxDigits` significant digits, not zero, within 10^+-maxAdjusted: every such decimal is the
     * shortest text of the float nearest it (DBL_DIG 15, FLT_DIG 6), so its digits are the answer.
     * Null for any other text.
     */
    private static String shortDecimalRepr(String text, int maxDigits, int maxAdjusted) {
        Plain p = plain(text, 64);
        if (p == null || p.first() < 0) {
            return null;
        }
        int pointAt = p.point() < 0 ? text.length() : p.point();
        StringBuilder digits = new StringBuilder(maxDigits + 1);
        for (int i = p.first(); i <= p.last() && digits.length() <= maxDigits; i++) {
            if (i != p.point()) {
                digits.append(text.charAt(i));
            }
        }
        // value = 0.digits x 10^exponent
        int exponent = p.first() < pointAt ? pointAt - p.first() : -(p.first() - pointAt - 1);
        if (digits.length() > maxDigits || Math.abs(exponent - 1) > maxAdjusted) {
            return null;
        }
        return Py.floatLayout(p.negative(), digits.toString(), exponent);
    }

    static String doubleText(String text) {
        String quick = shortDecimalRepr(text, 15, 300);
        if (quick != null) {
            return quick;
        }
        double value = floatValue(text);
        String special = special(value);
        return special != null ? special : Py.floatRepr(value);
    }

    /** The shortest text that reads back as the same 32-bit float, as Python's repr writes it. */
    static String floatText(String text) {
        String quick = shortDecimalRepr(text, 6, 30);
        if (quick != null) {
            return quick;
        }
        double value = floatValue(text);
        String special = special(value);
        if (special != null) {
            return special;
        }
        float target = (float) value;
        if (Float.isInfinite(target)) {
            throw new CanonicalError(Py.floatRepr(value) + " is beyond the range of a 32-bit float");
        }
        if (target == 0) {
            return Py.floatRepr(target);
        }
        java.math.BigDecimal exact = new java.math.BigDecimal(target);
        for (int digits = 1; digits < 18; digits++) {
            double candidate = exact.round(new java.math.MathContext(digits, java.math.RoundingMode.HALF_EVEN))
                    .doubleValue();
            if ((float) candidate == target) {
                return Py.floatRepr(candidate);
            }
        }
        return Py.floatRepr(target);
    }

    // ------------------------------------------------------------------ booleans, bytes
    static String bool(String text) {
        switch (Py.strip(text).toLowerCase(java.util.Locale.ROOT)) {
            case "1", "true", "t":
                return "true";
            case "0", "false", "f":
                return "false";
            default:
                throw new CanonicalError(Py.repr(text) + " is not a boolean");
        }
    }

    /** Standard base64 with padding, read as Python's `b64decode(text, validate=True)` (strict):
     * the alphabet only, no leading or inner padding, complete padding, nothing after it. */
    static String base64(String text) {
        StringBuilder data = new StringBuilder(text.length());
        int quad = 0;
        int pads = 0;
        boolean padding = false;
        boolean valid = true;
        for (int i = 0; i < text.length() && valid; i++) {
            char c = text.charAt(i);
            if (c == '=') {
                padding = true;
                if (i == 0) {
                    valid = false;
                } else if (quad >= 2 && quad + ++pads >= 4) {
                    valid = i + 1 == text.length();
                    quad = 0;
                    break;
                }
                continue;
            }
            boolean alphabet = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || c == '+' || c == '/';
            valid = alphabet && !padding;
            data.append(c);
            quad = (quad + 1) & 3;
        }
        if (!valid || quad != 0) {
            throw new CanonicalError(Py.repr(Py.head(text, 40)) + " is not base64");
        }
        return binary(Base64.getDecoder().decode(withPadding(data)));
    }

    private static String withPadding(StringBuilder data) {
        int rest = data.length() % 4;
        return rest == 0 ? data.toString() : data + "=".repeat(4 - rest);
    }

    static String binary(byte[] bytes) {
        return Base64.getEncoder().encodeToString(bytes);
    }

    /** Canal's binary text (the bytes decoded as ISO-8859-1) -> canonical base64 of the bytes. */
    static String latin1Binary(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) > 0xff) {
                throw new CanonicalError("binary text holds a character beyond ISO-8859-1");
            }
        }
        return binary(text.getBytes(StandardCharsets.ISO_8859_1));
    }

    // ------------------------------------------------------------------ dates and times
    /** `.123` for 123_000_000 ns; empty for 0. */
    static String fraction(int nanos) {
        if (nanos == 0) {
            return "";
        }
        char[] digits = new char[10];
        digits[0] = '.';
        int end = 0;
        for (int i = 9, rest = nanos; i >= 1; i--, rest /= 10) {
            digits[i] = (char) ('0' + rest % 10);
            if (end == 0 && rest % 10 != 0) {
                end = i + 1;
            }
        }
        return new String(digits, 0, end);
    }

    private static void pad(StringBuilder out, int value, int width) {
        String digits = Integer.toString(value);
        for (int i = digits.length(); i < width; i++) {
            out.append('0');
        }
        out.append(digits);
    }

    static int nanosOf(String fraction) {
        if (fraction == null || fraction.isEmpty()) {
            return 0;
        }
        StringBuilder digits = new StringBuilder(fraction);
        while (digits.length() < 9) {
            digits.append('0');
        }
        return Integer.parseInt(digits.toString());
    }

    static String date(int year, int month, int day) {
        StringBuilder out = new StringBuilder(10);
        pad(out, year, 4);
        out.append('-');
        pad(out, month, 2);
        out.append('-');
        pad(out, day, 2);
        return out.toString();
    }

    static String time(int hour, int minute, int second, int nanos) {
        StringBuilder out = new StringBuilder(18);
        pad(out, hour, 2);
        out.append(':');
        pad(out, minute, 2);
        out.append(':');
        pad(out, second, 2);
        return out.append(fraction(nanos)).toString();
    }

    static String datetime(Wall wall) {
        LocalDateTime t = wall.time();
        return date(t.getYear(), t.getMonthValue(), t.getDayOfMonth()) + " "
                + time(t.getHour(), t.getMinute(), t.getSecond(), wall.nanos());
    }

    /** Python's `date(year, month, day)` checks, with its messages. */
    private static String dateProblem(BigInteger year, int month, int day) {
        if (year.compareTo(BigInteger.ONE) < 0 || year.compareTo(BigInteger.valueOf(9999)) > 0) {
            return "year " + year + " is out of range";
        }
        if (month < 1 || month > 12) {
            return "month must be in 1..12";
        }
        if (day < 1 || day > YearMonth.of(year.intValueExact(), month).lengthOfMonth()) {
            return "day is out of range for month";
        }
        return null;
    }

    /** `YYYY-MM-DD` -> canonical date text; refused unless a calendar date. */
    static String dateText(String text) {
        if (isCanonicalDate(text)) {
            int year = digits(text, 0, 4);
            String problem = dateProblem(BigInteger.valueOf(year), digits(text, 5, 2), digits(text, 8, 2));
            if (problem != null) {
                throw new CanonicalError(Py.repr(text) + ": " + problem);
            }
            return text;
        }
        Matcher m = DATE.matcher(Py.strip(text));
        if (!m.matches()) {
            throw new CanonicalError(Py.repr(text) + " is not a date YYYY-MM-DD");
        }
        BigInteger year = Py.number(m.group(1));
        int month = Integer.parseInt(m.group(2));
        int day = Integer.parseInt(m.group(3));
        String problem = dateProblem(year, month, day);
        if (problem != null) {
            throw new CanonicalError(Py.repr(text) + ": " + problem);
        }
        return isCanonicalDate(text) ? text : date(year.intValueExact(), month, day);
    }

    private static boolean isCanonicalDate(String text) {
        return text.length() == 10 && asciiDigits(text, 0, 4) && text.charAt(4) == '-' && asciiDigits(text, 5, 7)
                && text.charAt(7) == '-' && asciiDigits(text, 8, 10);
    }

    private static boolean asciiDigits(String text, int from, int to) {
        for (int i = from; i < to; i++) {
            if (text.charAt(i) < '0' || text.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    /** `YYYY-MM-DD[ T]HH:MM:SS[.f]` -> the wall clock; refused unless a calendar date and time of day. */
    static Wall parseDatetime(String text) {
        String stripped = Py.strip(text);
        int[] fields = asciiDatetime(stripped, 0);
        if (fields != null && fields[7] == stripped.length()) {
            return wall(text, fields);
        }
        Matcher m = DATETIME.matcher(stripped);
        if (!m.matches()) {
            throw new CanonicalError(Py.repr(text) + " is not a datetime YYYY-MM-DD HH:MM:SS[.f]");
        }
        return wall(text, m);
    }

    private static int digits(String text, int from, int count) {
        int value = 0;
        for (int i = from; i < from + count; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }

    /**
     * The common case read by hand: ASCII `YYYY-MM-DD[ T]HH:MM:SS[.f{1,9}]` from `from`, as
     * {year, month, day, hour, minute, second, nanos, end}; null for any other shape (the regex,
     * which also reads other scripts' digits, decides those).
     */
    static int[] asciiDatetime(String text, int from) {
        if (text.length() < from + 19) {
            return null;
        }
        int[] f = {digits(text, from, 4), digits(text, from + 5, 2), digits(text, from + 8, 2), digits(text, from + 11, 2),
            digits(text, from + 14, 2), digits(text, from + 17, 2), 0, from + 19};
        char t = text.charAt(from + 10);
        if (text.charAt(from + 4) != '-' || text.charAt(from + 7) != '-' || (t != ' ' && t != 'T')
                || text.charAt(from + 13) != ':' || text.charAt(from + 16) != ':') {
            return null;
        }
        for (int i = 0; i < 6; i++) {
            if (f[i] < 0) {
                return null;
            }
        }
        int end = from + 19;
        if (end < text.length() && text.charAt(end) == '.') {
            int start = end + 1;
            int stop = start;
            while (stop < text.length() && stop - start < 10 && text.charAt(stop) >= '0' && text.charAt(stop) <= '9') {
                stop++;
            }
            if (stop == start || stop - start > 9) {
                return null;
            }
            f[6] = digits(text, start, stop - start);
            for (int i = stop - start; i < 9; i++) {
                f[6] *= 10;
            }
            end = stop;
        }
        f[7] = end;
        return f;
    }

    /** The wall clock of a DATETIME-shaped match (groups 1-7), checked as Python's datetime() checks. */
    static Wall wall(String text, Matcher m) {
        int[] f = new int[7];
        for (int i = 0; i < 6; i++) {
            f[i] = Integer.parseInt(m.group(i + 1));
        }
        f[6] = nanosOf(m.group(7));
        return wall(text, f);
    }

    /** The wall clock of {year, month, day, hour, minute, second, nanos}, checked as Python's datetime() checks. */
    static Wall wall(String text, int[] f) {
        String problem = dateProblem(BigInteger.valueOf(f[0]), f[1], f[2]);
        if (problem == null && f[3] > 23) {
            problem = "hour must be in 0..23";
        } else if (problem == null && f[4] > 59) {
            problem = "minute must be in 0..59";
        } else if (problem == null && f[5] > 59) {
            problem = "second must be in 0..59";
        }
        if (problem != null) {
            throw new CanonicalError(Py.repr(text) + ": " + problem);
        }
        return new Wall(LocalDateTime.of(f[0], f[1], f[2], f[3], f[4], f[5]), f[6]);
    }

    /** `YYYY-MM-DD[ T]HH:MM:SS[.f]` -> canonical zone-less datetime text. */
    static String datetimeText(String text) {
        Wall wall = parseDatetime(text);
        boolean canonical = text.length() == 19 && isCanonicalDate(text.substring(0, 10)) && text.charAt(10) == ' '
                && asciiDigits(text, 11, 13) && text.charAt(13) == ':' && asciiDigits(text, 14, 16)
                && text.charAt(16) == ':' && asciiDigits(text, 17, 19);
        return canonical ? text : datetime(wall);
    }

    /** `HH:MM:SS[.f]` (MySQL allows a sign and hours up to 838) -> canonical time text. */
    static String timeText(String text) {
        Matcher m = TIME.matcher(Py.strip(text));
        if (!m.matches()) {
            throw new CanonicalError(Py.repr(text) + " is not a time HH:MM:SS[.f]");
        }
        if (Integer.parseInt(m.group(3)) > 59 || Integer.parseInt(m.group(4)) > 59) {
            throw new CanonicalError(Py.repr(text) + " is not a valid time");
        }
        String sign = m.group(1) == null ? "" : "-";
        return sign + String.format("%02d", Integer.parseInt(m.group(2))) + ":" + m.group(3) + ":" + m.group(4)
                + fraction(nanosOf(m.group(5) == null ? null : Py.ascii(m.group(5))));
    }
}
