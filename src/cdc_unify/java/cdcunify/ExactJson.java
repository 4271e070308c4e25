package cdcunify;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A landed JSON value read in one pass as the JSON staging models read every value: valid UTF-8,
 * then one JSON value (RFC 8259: whitespace around it and nothing else, so two messages written
 * into one value are refused, not cut to the first), no key twice in any object (as Spark's
 * parse_json), a number kept as its exact text, a byte order mark refused (as Spark's parser does
 * text). What `try_variant_get` reads from such a document (cdc_exact_variant: every number a
 * string) is what the reads below return: a number renders quoted inside a nested value, and an
 * object's keys come in UTF-8 byte order, as a variant stores them.
 *
 * A parsed value is a tree of: Map (object, keys sorted), List (array), String, Num (number
 * text), Boolean, NULL (JSON null). A field absent from an object is Java null.
 */
public final class ExactJson {
    /** JSON null, told apart from an absent field (Java null). */
    public static final Object NULL = new Object();

    /** A JSON number: its text as sent. */
    public record Num(String text) {}

    /** Jackson's default limits, as Spark's parse_json has them, but for the number length: a
     * number is kept as its text, never converted, so a 1,200-digit decimal is a value like any other.
     * A key named twice is refused by the readers (`read` as it fills an object, the variant builder
     * of ExactVariant), not by Jackson's duplicate detection: a second set of each object's keys. */
    private static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxNumberLength(Integer.MAX_VALUE).build())
            .build();

    /** UTF-8 byte order of Java strings: code point order (String.compareTo orders UTF-16 units). */
    public static final Comparator<String> UTF8_ORDER = (a, b) -> {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    };

    private ExactJson() {}

    /** The bytes as text, or null when they are not valid UTF-8. The JDK's decoding constructor
     * (vectorised, an ASCII text copied as is) replaces each malformed sequence with U+FFFD, so a
     * text without one is valid; one with it is valid only when it encodes back to the same bytes
     * (a U+FFFD sent as such). A strict CharsetDecoder per value cost as much as parsing the JSON. */
    public static String utf8(byte[] bytes) {
        String text = new String(bytes, StandardCharsets.UTF_8);
        return text.indexOf('\uFFFD') < 0 || Arrays.equals(text.getBytes(StandardCharsets.UTF_8), bytes) ? text : null;
    }

    /** What a reader makes of one JSON value, given the parser at the value's first token. */
    interface ValueReader<T> {
        T read(JsonParser parser, JsonToken first) throws IOException;
    }

    /** The JSON value the text is, as `reader` reads it; null when the text is not one value (RFC
     * 8259: whitespace around it and nothing else) or the reader fails. */
    static <T> T readOne(String text, ValueReader<T> reader) {
        try (JsonParser parser = FACTORY.createParser(text)) {
            JsonToken token = parser.nextToken();
            T value = token == null ? null : reader.read(parser, token);
            return parser.nextToken() == null ? value : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The JSON value the text is, as a tree; null when it is not one. */
    public static Object parse(String text) {
        Comparator<String> order = SparkText.mayHoldSurrogate(text) ? UTF8_ORDER : Comparator.naturalOrder();
        return readOne(text, (parser, token) -> read(parser, token, order));
    }

    /** As `parse`, but each object's keys in the order the text has them, as Spark's text JSON
     * reader (from_json) keeps a map's (FromJson). */
    static Object parseInTextOrder(String text) {
        return readOne(text, (parser, token) -> read(parser, token, null));
    }

    /** The value at the parser; each object's keys in `order` (UTF8_ORDER, or String order for a
     * text that holds no surrogate, where the two agree), or as the text has them when null. */
    private static Object read(JsonParser parser, JsonToken token, Comparator<String> order) throws IOException {
        switch (token) {
            case START_OBJECT: {
                List<Map.Entry<String, Object>> fields = new ArrayList<>();
                for (JsonToken t = parser.nextToken(); t != JsonToken.END_OBJECT; t = parser.nextToken()) {
                    String name = parser.currentName();
                    fields.add(Map.entry(name, read(parser, parser.nextToken(), order)));
                }
                if (order != null) {
                    fields.sort(Map.Entry.comparingByKey(order));
                }
                // Sized for its fields: most objects are a few fields, an image dozens (no rehash).
                Map<String, Object> object = new LinkedHashMap<>(fields.size() * 4 / 3 + 1);
                for (Map.Entry<String, Object> field : fields) {
                    if (object.put(field.getKey(), field.getValue()) != null) {
                        throw new IOException("duplicate key " + field.getKey());
                    }
                }
                return object;
            }
            case START_ARRAY: {
                List<Object> array = new ArrayList<>();
                for (JsonToken t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
                    array.add(read(parser, t, order));
                }
                return array;
            }
            case VALUE_STRING:
                return parser.getText();
            case VALUE_NUMBER_INT:
            case VALUE_NUMBER_FLOAT:
                return new Num(parser.getText());
            case VALUE_TRUE:
                return Boolean.TRUE;
            case VALUE_FALSE:
                return Boolean.FALSE;
            case VALUE_NULL:
                return NULL;
            default:
                throw new IOException("unexpected token " + token);
        }
    }

    /** In the message and not JSON null. */
    public static boolean present(Object value) {
        return value != null && value != NULL;
    }

    /** A JSON object or array: not a name, code or scalar value, though `text` reads it as JSON text. */
    public static boolean nested(Object value) {
        return value instanceof Map || value instanceof List;
    }

    /** try_variant_get(value, '$', 'string'): a scalar's text, an object's or array's JSON; null
     * for JSON null or an absent field. */
    public static String text(Object value) {
        if (!present(value)) {
            return null;
        }
        if (value instanceof String s) {
            return s;
        }
        if (value instanceof Num n) {
            return n.text();
        }
        if (value instanceof Boolean b) {
            return b.toString();
        }
        return json(value);
    }

    /** to_json of the value as the variant holds it: a string quoted, a number as a string. */
    public static String json(Object value) {
        return rendered(value, false);
    }

    /** An embedded JSON value (Maxwell's JSON columns and SETs) as compact JSON: every number its
     * text as sent, object keys in String order (UTF-16 code units, as Spark's variant orders them). */
    public static String embeddedJson(Object value) {
        return rendered(value, true);
    }

    /** `{"name":"text",...}` in the order given, a null text as JSON null: what `json` writes for
     * such an object, names repeated as given (two names Spark stores as one stay two). */
    public static String textFields(List<String> names, List<String> texts) {
        StringBuilder out = new StringBuilder().append('{');
        for (int i = 0; i < names.size(); i++) {
            quoted(out.append(i == 0 ? "" : ","), names.get(i)).append(':');
            append(out, texts.get(i), false);
        }
        return out.append('}').toString();
    }

    private static String rendered(Object value, boolean embedded) {
        StringBuilder out = new StringBuilder();
        append(out, value, embedded);
        return out.toString();
    }

    /** Appends the value as `write` has a Jackson generator write it (compact), without one: a
     * generator per value (its buffers, a StringWriter's synchronized appends) cost as much as the
     * writing. */
    private static void append(StringBuilder out, Object value, boolean embedded) {
        if (value instanceof Map<?, ?> object) {
            out.append('{');
            // `json` writes the natural ids of several dialects, a walk per message: only an
            // embedded value pays for a sorted copy of an object's names.
            Map<?, ?> ordered = embedded ? new TreeMap<>(object) : object;
            boolean first = true;
            for (Map.Entry<?, ?> field : ordered.entrySet()) {
                quoted(out.append(first ? "" : ","), (String) field.getKey()).append(':');
                append(out, field.getValue(), embedded);
                first = false;
            }
            out.append('}');
        } else if (value instanceof List<?> array) {
            out.append('[');
            for (int i = 0; i < array.size(); i++) {
                append(out.append(i == 0 ? "" : ","), array.get(i), embedded);
            }
            out.append(']');
        } else if (value instanceof Num n) {
            if (embedded) {
                out.append(n.text());
            } else {
                quoted(out, n.text());
            }
        } else if (value instanceof String text) {
            quoted(out, text);
        } else if (value instanceof Boolean b) {
            out.append(b.booleanValue());
        } else {
            out.append("null");
        }
    }

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    /** The text as a JSON string, escaped as Jackson's generator escapes by default: a quote, a
     * backslash and the control characters (b, t, n, f and r short, the others as a six-character
     * escape of four upper-case hex digits), nothing else. */
    private static StringBuilder quoted(StringBuilder out, String text) {
        out.append('"');
        int start = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c == '"' || c == '\\') {
                out.append(text, start, i).append('\\');
                switch (c) {
                    case '"', '\\' -> out.append(c);
                    case '\b' -> out.append('b');
                    case '\t' -> out.append('t');
                    case '\n' -> out.append('n');
                    case '\f' -> out.append('f');
                    case '\r' -> out.append('r');
                    default -> out.append("u00").append(HEX[c >> 4]).append(HEX[c & 0xF]);
                }
                start = i + 1;
            }
        }
        return out.append(text, start, text.length()).append('"');
    }

    /** Writes the value as `json` does (a number as a string of its text), or `embeddedJson`, to a
     * generator (FromJson's, which writes UTF-8 as Spark's reader does). */
    static void write(JsonGenerator generator, Object value, boolean embedded) throws IOException {
        if (value instanceof Map<?, ?> object) {
            generator.writeStartObject();
            // `json` writes the natural ids of several dialects, a walk per message: only an
            // embedded value pays for a sorted copy of an object's names.
            Map<?, ?> ordered = embedded ? new TreeMap<>(object) : object;
            for (Map.Entry<?, ?> field : ordered.entrySet()) {
                generator.writeFieldName((String) field.getKey());
                write(generator, field.getValue(), embedded);
            }
            generator.writeEndObject();
        } else if (value instanceof List<?> array) {
            generator.writeStartArray();
            for (Object element : array) {
                write(generator, element, embedded);
            }
            generator.writeEndArray();
        } else if (value instanceof Num n && embedded) {
            generator.writeNumber(n.text());
        } else if (value instanceof Num n) {
            generator.writeString(n.text());
        } else if (value instanceof String s) {
            generator.writeString(s);
        } else if (value instanceof Boolean b) {
            generator.writeBoolean(b);
        } else {
            generator.writeNull();
        }
    }

    /** try_variant_get(value, '$', 'map<string, variant>'): the object, null for anything else. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(Object value) {
        return value instanceof Map ? (Map<String, Object>) value : null;
    }

    /** The first of `fields` of the object holding a JSON object or array (a name field that is no
     * name); null when none does. */
    public static String firstNested(Map<String, Object> object, String... fields) {
        for (String field : fields) {
            if (nested(object.get(field))) {
                return field;
            }
        }
        return null;
    }

    /** The field of an object at a path of names ('$.a.b'), Java null where the path ends. */
    public static Object at(Object value, String... path) {
        Object found = value;
        for (String name : path) {
            Map<String, Object> object = object(found);
            found = object == null ? null : object.get(name);
        }
        return found;
    }

    /** try_variant_get(value, '$', 'map<string, string>'): each field's text, keys in order. */
    public static Map<String, String> textMap(Object value) {
        Map<String, Object> object = object(value);
        if (object == null) {
            return null;
        }
        Map<String, String> texts = new LinkedHashMap<>();
        for (Map.Entry<String, Object> field : object.entrySet()) {
            texts.put(field.getKey(), text(field.getValue()));
        }
        return texts;
    }

    /** try_variant_get(value, '$', 'array<string>'): each element's text; null if not an array. */
    public static List<String> textArray(Object value) {
        if (!(value instanceof List<?> array)) {
            return null;
        }
        List<String> texts = new ArrayList<>(array.size());
        for (Object element : array) {
            texts.add(text(element));
        }
        return texts;
    }

    /** try_variant_get(value, '$', 'array<map<string, string>>'): each element's textMap (null for
     * an element that is not an object); null if not an array. */
    public static List<Map<String, String>> textMaps(Object value) {
        if (!(value instanceof List<?> array)) {
            return null;
        }
        List<Map<String, String>> maps = new ArrayList<>(array.size());
        for (Object element : array) {
            maps.add(textMap(element));
        }
        return maps;
    }

    /** nestedKeys of each object element joined by '' (the old SQL models'
     * array_join(transform(rows, r -> array_join(nested keys, ', ')), '')): the columns of row
     * images whose value is an object or array. */
    public static String nestedColumns(Object value) {
        StringBuilder joined = new StringBuilder();
        if (value instanceof List<?> array) {
            for (Object element : array) {
                Map<String, Object> row = object(element);
                if (row != null) {
                    joined.append(nestedKeys(row));
                }
            }
        }
        return joined.toString();
    }

    /** The columns of one image whose value is an object or array, joined by ", ". */
    public static String nestedKeys(Map<String, Object> row) {
        List<String> names = new ArrayList<>();
        for (Map.Entry<String, Object> field : row.entrySet()) {
            if (nested(field.getValue())) {
                names.add(field.getKey());
            }
        }
        return String.join(", ", names);
    }
}
