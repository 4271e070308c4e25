package cdcunify;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/** What the message functions (the cdcunify.*Rows classes) need of Spark's own rules, so that a
 * row they build is the one the SQL they replace built. */
final class SparkText {
    /** A digest per thread (digest() resets it): looking one up per value cost a provider search. */
    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    });

    private SparkText() {}

    /** The text as a Spark string holds it (a lone surrogate becomes '?'), which is what the
     * decoder's refusal texts quote; the text itself when it has none (a pair stays as it is). */
    static String asSpark(String text) {
        return hasLoneSurrogate(text) ? new String(text.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8) : text;
    }

    /** The map's keys and values as Spark holds them; the map itself when nothing changes. */
    static Map<String, String> asSpark(Map<String, String> texts) {
        if (texts == null || !anySurrogate(texts.keySet()) && !anySurrogate(texts.values())) {
            return texts;
        }
        Map<String, String> held = new LinkedHashMap<>();
        texts.forEach((column, text) -> held.put(asSpark(column), asSpark(text)));
        return held;
    }

    /** A parsed JSON value (ExactJson's tree) as Spark's variant functions give it back: every
     * string as Spark holds it, an object's keys in Java string (UTF-16) order. The value itself
     * when no key holds a surrogate (code point order is then UTF-16 order) and no string a lone
     * one (an emoji in a value changes nothing). */
    static Object tree(Object value) {
        return differsInSpark(value) ? rebuilt(value) : value;
    }

    /** `tree` of a document parsed from the text: a surrogate comes from a `\\u` escape or a
     * character past U+FFFF, so a text with neither needs no walk of the document. */
    static Object tree(String text, Object document) {
        return mayHoldSurrogate(text) ? tree(document) : document;
    }

    /** A JSON text decoded from UTF-8 whose parse may hold a surrogate: one written as a `\\u`
     * escape, or a character past U+FFFF (a surrogate pair, so fewer code points than chars; a
     * text of Latin-1 characters alone counts them without a walk). */
    static boolean mayHoldSurrogate(String text) {
        return text.contains("\\u") || text.codePointCount(0, text.length()) != text.length();
    }

    /** A key of the tree holds a surrogate or a string a lone one: the one case where Spark's tree
     * differs, so the common case allocates nothing. */
    private static boolean differsInSpark(Object value) {
        if (value instanceof String text) {
            return hasLoneSurrogate(text);
        }
        if (value instanceof List<?> array) {
            for (Object element : array) {
                if (differsInSpark(element)) {
                    return true;
                }
            }
            return false;
        }
        Map<String, Object> object = ExactJson.object(value);
        if (object != null) {
            for (Map.Entry<String, Object> field : object.entrySet()) {
                if (hasSurrogate(field.getKey()) || differsInSpark(field.getValue())) {
                    return true;
                }
            }
        }
        return false;
    }

    private static Object rebuilt(Object value) {
        if (value instanceof String text) {
            return asSpark(text);
        }
        if (value instanceof List<?> array) {
            List<Object> held = new ArrayList<>(array.size());
            boolean changed = false;
            for (Object element : array) {
                Object readBack = rebuilt(element);
                changed |= readBack != element;
                held.add(readBack);
            }
            return changed ? held : value;
        }
        Map<String, Object> object = ExactJson.object(value);
        if (object == null) {
            return value;
        }
        boolean reorder = anySurrogate(object.keySet());
        Map<String, Object> held = reorder ? new TreeMap<>() : new LinkedHashMap<>();
        boolean changed = reorder;
        for (Map.Entry<String, Object> field : object.entrySet()) {
            Object readBack = rebuilt(field.getValue());
            changed |= readBack != field.getValue();
            held.put(asSpark(field.getKey()), readBack);
        }
        return changed ? new LinkedHashMap<>(held) : value;
    }

    /** An object below the top of a JSON object with two keys Spark stores as one ('?' for a lone
     * surrogate): the cast of the message to map<string, variant> refuses to build it
     * (VARIANT_DUPLICATE_KEY), so it is no JSON value a model can read. Valid UTF-8 decodes to no
     * lone surrogate, so only a text with a `\\u` escape can hold one: the others need no walk. */
    static boolean nestedKeysCollide(String text, Object document) {
        Map<String, Object> object = ExactJson.object(document);
        return object != null && text.contains("\\u") && collide(object.values());
    }

    private static boolean collide(Iterable<?> values) {
        for (Object value : values) {
            if (value instanceof List<?> array && collide(array)) {
                return true;
            }
            Map<String, Object> object = ExactJson.object(value);
            if (object != null && (keysCollide(object.keySet()) || collide(object.values()))) {
                return true;
            }
        }
        return false;
    }

    /** Two keys Spark stores as one: only a key with a surrogate can change, so the keys of a
     * parsed object (distinct) stay distinct unless one holds one. */
    private static boolean keysCollide(Set<String> keys) {
        if (!anySurrogate(keys)) {
            return false;
        }
        Set<String> stored = new HashSet<>();
        for (String key : keys) {
            if (!stored.add(asSpark(key))) {
                return true;
            }
        }
        return false;
    }

    private static boolean anySurrogate(Iterable<String> texts) {
        for (String text : texts) {
            if (hasSurrogate(text)) {
                return true;
            }
        }
        return false;
    }

    /** A surrogate that is not half of a pair: UTF-8 has no bytes for it, so Spark stores '?'. */
    private static boolean hasLoneSurrogate(String text) {
        for (int i = 0; text != null && i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasSurrogate(String text) {
        if (text != null) {
            for (int i = 0; i < text.length(); i++) {
                if (Character.isSurrogate(text.charAt(i))) {
                    return true;
                }
            }
        }
        return false;
    }

    /** try_cast(text as bigint) of a text a `^-?[0-9]{n,m}$` pattern found: its digits, with the
     * line terminator `$` may have matched before (Spark's cast trims `\n` and `\r`, not U+0085,
     * U+2028 or U+2029); null when it overflows. */
    static Long bigint(String text) {
        int end = text.length();
        while (end > 0 && (text.charAt(end - 1) == '\n' || text.charAt(end - 1) == '\r')) {
            end--;
        }
        try {
            return Long.parseLong(text.substring(0, end));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** sha2(text, 256): the SHA-256 of the text's UTF-8 bytes, in lower-case hex. */
    static String sha2(String text) {
        return HexFormat.of().formatHex(SHA_256.get().digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    /** `text rlike pattern`: the pattern found in the text (no text: no match). */
    static boolean finds(Pattern pattern, String text) {
        return text != null && pattern.matcher(text).find();
    }

    /** cast(text as decimal(p, 0)) of a text a `^-?[0-9]{1,n}$` pattern finds (Java's `$` also
     * matches before a final line terminator): its number, a final `\n`, `\r\n` or `\r` trimmed
     * as Spark's cast trims it; null when the pattern does not find it or the cast cannot read it (a
     * final U+0085, U+2028 or U+2029, on which the old SQL models' ANSI cast failed the build). */
    static BigInteger foundNumber(Pattern pattern, String text) {
        if (!finds(pattern, text)) {
            return null;
        }
        int end = text.endsWith("\r\n") ? text.length() - 2
                : text.endsWith("\r") || text.endsWith("\n") ? text.length() - 1 : text.length();
        String trimmed = text.substring(0, end);
        return signedDigits(trimmed, false) ? new BigInteger(trimmed) : null;
    }

    /** try_cast(text as int): ASCII blanks and control characters around an optionally signed
     * run of ASCII digits; null for anything else and on overflow. */
    static Integer integer(String text) {
        String number = castNumber(text);
        try {
            return number == null ? null : Integer.parseInt(number);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** try_cast(text as bigint), by integer's rules. */
    static Long tryBigint(String text) {
        String number = castNumber(text);
        try {
            return number == null ? null : Long.parseLong(number);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** The signed digits a cast to an integral type reads, null when the text is not one. */
    private static String castNumber(String text) {
        if (text == null) {
            return null;
        }
        int start = 0;
        int end = text.length();
        while (start < end && blankOrControl(text.charAt(start))) {
            start++;
        }
        while (end > start && blankOrControl(text.charAt(end - 1))) {
            end--;
        }
        String number = text.substring(start, end);
        return signedDigits(number, true) ? number : null;
    }

    /** `-?[0-9]+` (with `plus`, `[+-]?[0-9]+`) matches the whole text; no regex, as it runs per value. */
    private static boolean signedDigits(String text, boolean plus) {
        int start = !text.isEmpty() && (text.charAt(0) == '-' || plus && text.charAt(0) == '+') ? 1 : 0;
        return start < text.length() && Py.allDigits(text.substring(start));
    }

    private static boolean blankOrControl(char c) {
        return c <= ' ' || c == 0x7f;
    }

    /** array_distinct(filter(names, n -> n != '')) if `dropEmpty`, else array_distinct(names): names
     * without repeats, in first-seen order; empty for no list. */
    static List<String> distinct(List<String> names, boolean dropEmpty) {
        LinkedHashSet<String> kept = new LinkedHashSet<>();
        if (names != null) {
            for (String name : names) {
                if (!dropEmpty || name != null && !name.isEmpty()) {
                    kept.add(name);
                }
            }
        }
        return new ArrayList<>(kept);
    }

    /** Both maps, `second` winning on a shared key and its columns last. */
    static Map<String, String> union(Map<String, String> first, Map<String, String> second) {
        Map<String, String> union = new LinkedHashMap<>();
        if (first != null) {
            first.forEach((column, text) -> {
                if (second == null || !second.containsKey(column)) {
                    union.put(column, text);
                }
            });
        }
        if (second != null) {
            union.putAll(second);
        }
        return union;
    }

    /** nullif(text, ''). */
    static String nullIfEmpty(String text) {
        return text == null || text.isEmpty() ? null : text;
    }
}
