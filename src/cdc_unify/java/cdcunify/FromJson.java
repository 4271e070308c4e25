package cdcunify;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What Spark's `from_json(text, schema)` (partial results on, Spark 4), over the text with every
 * number quoted as the DataWorks SQL models read it, makes of the fields of a JSON value read by
 * ExactJson.parseInTextOrder: DataWorksRows reads its messages so. A number reads as its text
 * wherever a string is asked for.
 *
 * A field whose JSON type does not fit the schema's is null and the rest of its struct is kept; an
 * array of structs with any element that is neither an object nor null is null as a whole. A
 * string asked of an object or array is Jackson's compact text of it, written by the UTF-8
 * generator Spark writes it with (a character outside the BMP as two `\\uXXXX` escapes).
 */
final class FromJson {
    private static final JsonFactory FACTORY = new JsonFactory();

    private FromJson() {}

    /** A string field: a string as Spark holds it, true/false, a number's text, an object's or
     * array's JSON text; null for JSON null or an absent field. */
    static String string(Object value) {
        if (!ExactJson.present(value)) {
            return null;
        }
        if (value instanceof String s) {
            return SparkText.asSpark(s);
        }
        if (value instanceof ExactJson.Num n) {
            return n.text();
        }
        if (value instanceof Boolean b) {
            return b.toString();
        }
        return jacksonText(value);
    }

    /** A map<string, string> field: each key and value as `string` reads them, in text order (a key
     * Spark holds as another, through a lone surrogate, keeps the first place and the last value, as
     * a Java map of the Spark map's entries does); null when not an object. */
    static Map<String, String> stringMap(Object value) {
        Map<String, Object> object = ExactJson.object(value);
        if (object == null) {
            return null;
        }
        Map<String, String> map = new LinkedHashMap<>();
        object.forEach((key, field) -> map.put(SparkText.asSpark(key), string(field)));
        return map;
    }

    /** An array<string> field: each element as `string` reads it; null when not an array. */
    static List<String> strings(Object value) {
        if (!(value instanceof List<?> array)) {
            return null;
        }
        List<String> strings = new ArrayList<>(array.size());
        for (Object element : array) {
            strings.add(string(element));
        }
        return strings;
    }

    /** An array<struct<...>> field: its elements (null for a JSON null element); null when not an
     * array or when an element is neither an object nor null. */
    static List<Map<String, Object>> structs(Object value) {
        if (!(value instanceof List<?> array)) {
            return null;
        }
        List<Map<String, Object>> structs = new ArrayList<>(array.size());
        for (Object element : array) {
            Map<String, Object> struct = ExactJson.object(element);
            if (struct == null && element != ExactJson.NULL) {
                return null;
            }
            structs.add(struct);
        }
        return structs;
    }

    /** The JSON text Spark's reader gives a string field holding an object or array. */
    private static String jacksonText(Object value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator generator = FACTORY.createGenerator(out, JsonEncoding.UTF8)) {
            ExactJson.write(generator, value, false);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
