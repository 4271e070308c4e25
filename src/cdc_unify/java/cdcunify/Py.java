package cdcunify;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Python's text semantics where the value decoders (src/cdc_unify/canonicalizers, the oracle of
 * this package's decoders) rely on them: `str.strip()` and `isspace`, code-point slicing, `repr`
 * of a string (in refusal reasons) and of a float (canonical text of a double), and the string
 * grammar of `decimal.Decimal`. Same input, same text: a staged row must not depend on which
 * decoder wrote it.
 */
final class Py {
    private Py() {}

    /** Python's `\s` (`str.isspace`), which has U+001C..U+001F where Java's Unicode `\s` has not. */
    private static final String SPACE =
            "\\t\\n\\x0B\\f\\r\\x1C-\\x20\\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000";

    /** A regex read as Python's `re` reads a str pattern: `\d` any script's digits, `\s` and
     * `\S` Python's blanks. */
    static Pattern regex(String pattern, int flags) {
        String python = pattern.replace("\\s", "[" + SPACE + "]").replace("\\S", "[^" + SPACE + "]");
        return Pattern.compile(python, flags | Pattern.UNICODE_CHARACTER_CLASS);
    }

    static Pattern regex(String pattern) {
        return regex(pattern, 0);
    }

    /** `str(text)` of an optional text: `None` for null. */
    static String str(String text) {
        return text == null ? "None" : text;
    }

    /** `str.split()`: runs of Python whitespace. */
    static List<String> split(String text) {
        List<String> words = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        text.codePoints().forEach(c -> {
            if (Py.isSpace(c)) {
                if (word.length() > 0) {
                    words.add(word.toString());
                    word.setLength(0);
                }
            } else {
                word.appendCodePoint(c);
            }
        });
        if (word.length() > 0) {
            words.add(word.toString());
        }
        return words;
    }

    /** The text with every decimal digit (any script's, as Python's `\d` and `int()` read them)
     * as its ASCII digit; signs, points and the rest kept. */
    static String ascii(String text) {
        StringBuilder out = new StringBuilder(text.length());
        text.codePoints().forEach(c -> out.appendCodePoint(
                Character.getType(c) == Character.DECIMAL_DIGIT_NUMBER ? '0' + Character.digit(c, 10) : c));
        return out.toString();
    }

    /** `int(text)` of an optionally signed run of decimal digits (any script's). */
    static BigInteger number(String text) {
        return new BigInteger(ascii(text));
    }

    /** `str(int(digits))`: decimal digits (any script's) as canonical ASCII digits. */
    static String integer(String digits) {
        return number(digits).toString();
    }

    /** `str.isspace()` of one code point. */
    static boolean isSpace(int c) {
        return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680
                || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f
                || c == 0x3000;
    }

    /** `str.strip()`. */
    static String strip(String text) {
        int start = 0;
        int end = text.length();
        while (start < end && isSpace(text.codePointAt(start))) {
            start += Character.charCount(text.codePointAt(start));
        }
        while (end > start && isSpace(text.codePointBefore(end))) {
            end -= Character.charCount(text.codePointBefore(end));
        }
        return text.substring(start, end);
    }

    /** `len(text)`: code points. */
    static int len(String text) {
        return text.codePointCount(0, text.length());
    }

    /** `text[:n]`. */
    static String head(String text, int n) {
        return len(text) <= n ? text : text.substring(0, text.offsetByCodePoints(0, n));
    }

    /** `str.isprintable()` of one code point. */
    private static boolean printable(int c) {
        if (c == ' ') {
            return true;
        }
        return switch (Character.getType(c)) {
            case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE,
                    Character.UNASSIGNED, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
                    Character.SPACE_SEPARATOR -> false;
            default -> true;
        };
    }

    /** `repr(text)`. */
    static String repr(String text) {
        char quote = text.indexOf('\'') >= 0 && text.indexOf('"') < 0 ? '"' : '\'';
        StringBuilder out = new StringBuilder(text.length() + 2).append(quote);
        text.codePoints().forEach(c -> {
            if (c == quote || c == '\\') {
                out.append('\\').appendCodePoint(c);
            } else if (c == '\t') {
                out.append("\\t");
            } else if (c == '\n') {
                out.append("\\n");
            } else if (c == '\r') {
                out.append("\\r");
            } else if (c < 0x7f && c >= 0x20) {
                out.append((char) c);
            } else if (printable(c) && c >= 0xa0) {
                out.appendCodePoint(c);
            } else if (c <= 0xff) {
                out.append(String.format("\\x%02x", c));
            } else if (c <= 0xffff) {
                out.append(String.format("\\u%04x", c));
            } else {
                out.append(String.format("\\U%08x", c));
            }
        });
        return out.append(quote).toString();
    }

    /** `repr(value)` of a finite double: the shortest digits that read back as it, in Python's layout. */
    static String floatRepr(double value) {
        if (value == 0) {
            return Double.doubleToRawLongBits(value) < 0 ? "-0.0" : "0.0";
        }
        BigDecimal shortest = shortestDigits(value);
        String digits = shortest.unscaledValue().abs().toString();
        return floatLayout(value < 0, digits, digits.length() - shortest.scale());
    }

    /** Python's layout of a float's shortest digits: `value = 0.digits x 10^point`. */
    static String floatLayout(boolean negative, String digits, int point) {
        StringBuilder out = new StringBuilder(negative ? "-" : "");
        if (point > -4 && point <= 16) {
            if (point <= 0) {
                out.append("0.").append("0".repeat(-point)).append(digits);
            } else if (point >= digits.length()) {
                out.append(digits).append("0".repeat(point - digits.length())).append(".0");
            } else {
                out.append(digits, 0, point).append('.').append(digits, point, digits.length());
            }
            return out.toString();
        }
        out.append(digits.charAt(0));
        if (digits.length() > 1) {
            out.append('.').append(digits, 1, digits.length());
        }
        int exponent = point - 1;
        out.append(exponent < 0 ? "e-" : "e+");
        String magnitude = Integer.toString(Math.abs(exponent));
        return out.append(magnitude.length() < 2 ? "0" : "").append(magnitude).toString();
    }

    /** The fewest significant digits that read back as `value`, the nearest such when several do
     * (Python's repr, David Gay's shortest mode); trailing zeros stripped. */
    private static BigDecimal shortestDigits(double value) {
        BigDecimal exact = new BigDecimal(value);
        // The precisions with a candidate that reads back are every one from the shortest up (a
        // candidate of p digits is one of p + 1 too, and the one of p + 1 on its side of the value
        // is nearer), and Double.toString's digits read back: start at their count, go down while
        // one digit fewer still reads back. Trying each precision from 1 cost up to 51 roundings.
        int precision = Math.min(17, significantDigits(Double.toString(value)));
        BigDecimal found = readBack(exact, value, precision);
        for (BigDecimal shorter; precision > 1 && (shorter = readBack(exact, value, precision - 1)) != null; precision--) {
            found = shorter;
        }
        return found;
    }

    /** The value's nearest number of `precision` digits if it reads back as the value; else the
     * one below or, at a power of two (the gap below half the gap above), the one above; null if
     * none does. */
    private static BigDecimal readBack(BigDecimal exact, double value, int precision) {
        for (RoundingMode mode : READ_BACK_ORDER) {
            BigDecimal candidate = exact.round(new MathContext(precision, mode));
            if (candidate.doubleValue() == value) {
                return candidate.stripTrailingZeros();
            }
        }
        return null;
    }

    private static final RoundingMode[] READ_BACK_ORDER = {RoundingMode.HALF_EVEN, RoundingMode.FLOOR, RoundingMode.CEILING};

    /** The significant digits of Double.toString's text ("1.25E-7", "100.0"). */
    private static int significantDigits(String text) {
        int exponent = text.indexOf('E');
        String digits = (exponent < 0 ? text : text.substring(0, exponent)).replace("-", "").replace(".", "");
        int first = 0;
        int last = digits.length();
        while (first < last - 1 && digits.charAt(first) == '0') {
            first++;
        }
        while (last > first + 1 && digits.charAt(last - 1) == '0') {
            last--;
        }
        return last - first;
    }

    /**
     * A number as `decimal.Decimal(text)` reads it: ASCII digits (any Unicode decimal digit is
     * read as its value), underscores ignored, `Infinity`/`Inf`/`NaN`/`sNaN` in any case. Finite:
     * coefficient digits without leading zeros ("0" for zero) and exponent; `special` names the
     * others. Null when Decimal refuses the text.
     */
    record Dec(boolean negative, String digits, long exponent, String special) {
        boolean finite() {
            return special == null;
        }

        /** `Decimal.adjusted()`. */
        long adjusted() {
            return exponent + digits.length() - 1;
        }

        boolean isZero() {
            return digits.equals("0");
        }

        /** Exactly, as a BigDecimal; only for exponents within int range. */
        BigDecimal toBigDecimal() {
            BigDecimal magnitude = new BigDecimal(new BigInteger(digits), Math.toIntExact(-exponent));
            return negative ? magnitude.negate() : magnitude;
        }

        /** `str(Decimal)`: scientific string of the decimal specification. */
        String sciString() {
            String sign = negative ? "-" : "";
            if (special != null) {
                return sign + special;
            }
            long adjusted = adjusted();
            if (exponent <= 0 && adjusted >= -6) {
                if (exponent == 0) {
                    return sign + digits;
                }
                long point = digits.length() + exponent;
                if (point > 0) {
                    return sign + digits.substring(0, (int) point) + "." + digits.substring((int) point);
                }
                return sign + "0." + "0".repeat((int) -point) + digits;
            }
            String mantissa = digits.length() > 1 ? digits.charAt(0) + "." + digits.substring(1) : digits;
            return sign + mantissa + "E" + (adjusted >= 0 ? "+" : "-") + Math.abs(adjusted);
        }
    }

    private static final long MAX_EXPONENT = 999_999_999_999_999_999L;

    static Dec decimal(String text) {
        StringBuilder ascii = new StringBuilder(text.length());
        String stripped = strip(text);
        for (int i = 0; i < stripped.length(); ) {
            int c = stripped.codePointAt(i);
            i += Character.charCount(c);
            if (c == '_') {
                continue;
            }
            if (c < 0x80) {
                ascii.append((char) c);
            } else if (Character.getType(c) == Character.DECIMAL_DIGIT_NUMBER) {
                ascii.append((char) ('0' + Character.digit(c, 10)));
            } else {
                return null;
            }
        }
        return parseAscii(ascii.toString());
    }

    private static Dec parseAscii(String s) {
        int i = 0;
        boolean negative = false;
        if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
            negative = s.charAt(i) == '-';
            i++;
        }
        String rest = s.substring(i).toLowerCase(java.util.Locale.ROOT);
        if (rest.equals("inf") || rest.equals("infinity")) {
            return new Dec(negative, null, 0, "Infinity");
        }
        for (String nan : new String[] {"snan", "nan"}) {
            if (rest.startsWith(nan) && allDigits(rest.substring(nan.length()))) {
                return new Dec(negative, null, 0, nan.equals("nan") ? "NaN" : "sNaN");
            }
        }
        StringBuilder digits = new StringBuilder();
        int fractionDigits = 0;
        boolean point = false;
        int seen = 0;
        for (; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= '0' && c <= '9') {
                digits.append(c);
                seen++;
                if (point) {
                    fractionDigits++;
                }
            } else if (c == '.' && !point) {
                point = true;
            } else {
                break;
            }
        }
        if (seen == 0) {
            return null;
        }
        long exponent = 0;
        if (i < s.length()) {
            if (s.charAt(i) != 'e' && s.charAt(i) != 'E') {
                return null;
            }
            String written = s.substring(i + 1);
            String magnitude = written.startsWith("+") || written.startsWith("-") ? written.substring(1) : written;
            if (magnitude.isEmpty() || !allDigits(magnitude)) {
                return null;
            }
            BigInteger value = new BigInteger(written.startsWith("+") ? magnitude : written);
            if (value.abs().compareTo(BigInteger.valueOf(MAX_EXPONENT)) > 0) {
                return null;
            }
            exponent = value.longValue();
        }
        int zeros = 0;
        while (zeros < digits.length() - 1 && digits.charAt(zeros) == '0') {
            zeros++;
        }
        String coefficient = digits.substring(zeros);
        return new Dec(negative, coefficient, exponent - fractionDigits, null);
    }

    /** Only ASCII digits (none: true). */
    static boolean allDigits(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }
}
