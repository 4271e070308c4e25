package cdcunify;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.UnaryOperator;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF4;
import scala.collection.Seq;

/**
 * SQL function `cdc_jvm_canonical_image(dialect, map_entries(image), map_entries(types), source_tz)`:
 * one row image in canonical text, the JVM twin of the Python value decoders
 * (src/cdc_unify/canonicalizers, which stay the definition: tests/python/test_jvm_canonical.py
 * checks this against them) for every dialect that declares column types. Returns
 * struct<values, types, error> (`CANONICAL_IMAGE` of src/cdc_unify/jvm.py): what the Python
 * decoder returns, keys in its order, and the reason instead of a crash when a value cannot be
 * read as its type (the model quarantines the message `invalid_value`). The image and its types
 * come as arrays of entries (map_entries), because a map argument reaches a Java
 * function as a Scala map that has lost its key order.
 */
public final class CanonicalImage implements UDF4<String, Seq<Row>, Seq<Row>, String, Row> {
    private static final long serialVersionUID = 1L;

    /** One dialect's decoder: `canonicalize_image(values, source_types, source_tz)` of its module. */
    interface Decoder {
        /** The image's canonical values and logical types; CanonicalError for a value it cannot read. */
        Decoded decode(Map<String, String> values, Map<String, String> declared, String sourceTz);
    }

    record Decoded(Map<String, String> values, Map<String, String> types) {
        /** Both maps in key order (code points, as Python's `sorted`). */
        Decoded sorted() {
            Map<String, String> v = new TreeMap<>(ExactJson.UTF8_ORDER);
            v.putAll(values);
            Map<String, String> t = new TreeMap<>(ExactJson.UTF8_ORDER);
            t.putAll(types);
            return new Decoded(new LinkedHashMap<>(v), new LinkedHashMap<>(t));
        }
    }

    /** One decoder per dialect and JVM: the MySQL family's caches its type lookups. */
    private static final Map<String, Decoder> DECODERS = new ConcurrentHashMap<>();

    static Decoder decoder(String dialect) {
        return DECODERS.computeIfAbsent(dialect, CanonicalImage::newDecoder);
    }

    private static Decoder newDecoder(String dialect) {
        return switch (dialect) {
            case "canal_json", "cloudcanal_json", "oms_canal_json" -> MysqlFamily.decoder(dialect);
            case "dataworks_json" -> DataWorksValues::decode;
            case "oms_dataworks_json" -> OmsDataWorksValues::decode;
            case "oms_default_ext_json" -> OmsExtendedValues::decode;
            default -> throw new IllegalArgumentException("cdc_jvm_canonical_image: no value decoder for " + dialect);
        };
    }

    /** A decoded image: its canonical values and logical types, or the reason it cannot be read. */
    record Image(Map<String, String> values, Map<String, String> types, String error) {
        static final Image NONE = new Image(null, null, null);
    }

    /** Dialects that send no column types: every value kept as sent and typed 'string', nothing to
     * decode. */
    private static final Set<String> KEPT_AS_SENT =
            Set.of("oms_default_json", "ogg_json", "oms_shareplex_json", "ckafka_json", "maxwell_json");

    /** The types of a row's images kept as sent: 'string' for every column of either (before's
     * first); null for no image. */
    static Map<String, String> sentTypes(Map<String, String> before, Map<String, String> after) {
        return SparkText.union(before == null ? null : asStrings(before), after == null ? null : asStrings(after));
    }

    /** The image through the dialect's decoder (kept as sent where the dialect sends no types); NONE
     * for no image. */
    static Image image(String dialect, Map<String, String> values, Map<String, String> declared, String sourceTz) {
        if (KEPT_AS_SENT.contains(dialect)) {
            return values == null ? Image.NONE : new Image(values, asStrings(values), null);
        }
        Decoder decoder = decoder(dialect);
        if (values == null) {
            return Image.NONE;
        }
        try {
            Decoded decoded = decoder.decode(values, declared == null ? Map.of() : declared, sourceTz);
            return new Image(decoded.values(), decoded.types(), null);
        } catch (CanonicalError error) {
            return new Image(null, null, error.getMessage());
        }
    }

    @Override
    public Row call(String dialect, Seq<Row> image, Seq<Row> types, String sourceTz) {
        Image decoded = image(dialect, image == null ? null : map(image), types == null ? null : map(types), sourceTz);
        return RowFactory.create(decoded.values(), decoded.types(), decoded.error());
    }

    private static Map<String, String> map(Seq<Row> entries) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < entries.length(); i++) {
            Row entry = entries.apply(i);
            map.put(entry.getString(0), entry.getString(1));
        }
        return map;
    }

    private static Map<String, String> asStrings(Map<String, String> values) {
        Map<String, String> types = new LinkedHashMap<>();
        values.keySet().forEach(column -> types.put(column, "string"));
        return types;
    }

    /** A table of declared type names, each row `logical: NAME|NAME|...`. */
    static Map<String, String> typeTable(String... rows) {
        Map<String, String> table = new HashMap<>();
        for (String row : rows) {
            String[] parts = row.split(": ", 2);
            for (String name : parts[1].split("\\|")) {
                table.put(name, parts[0]);
            }
        }
        return table;
    }

    private static final String NULL_TYPE = "\u0000null";

    /** `mapping` remembered per declared type: a feed declares few distinct types, each again in
     * every image, and reading one (a regex or two) costs more than the value it types. */
    static UnaryOperator<String> cached(UnaryOperator<String> mapping) {
        Map<String, String> cache = new ConcurrentHashMap<>();
        return sourceType -> {
            String key = sourceType == null ? NULL_TYPE : sourceType;
            String known = cache.get(key);
            if (known == null) {
                known = mapping.apply(sourceType);
                if (cache.size() < 10_000) {
                    cache.put(key, known);
                }
            }
            return known;
        };
    }

    /** Every value read under its column's declared logical type (`string` for an undeclared
     * column) by `read`, which gives {canonical text, the value's logical type}; both maps sorted. */
    static Decoded readEach(Map<String, String> values, Map<String, String> declared, UnaryOperator<String> logicalType,
            BiFunction<String, String, String[]> read) {
        Map<String, String> types = new LinkedHashMap<>();
        declared.forEach((column, type) -> types.put(column, logicalType.apply(type)));
        Map<String, String> canonical = new LinkedHashMap<>();
        values.forEach((column, text) -> {
            String kind = types.computeIfAbsent(column, c -> "string");
            if (text == null) {
                canonical.put(column, null);
                return;
            }
            try {
                String[] value = read.apply(kind, text);
                canonical.put(column, value[0]);
                types.put(column, value[1]);
            } catch (CanonicalError error) {
                throw columnError(column, Py.str(declared.get(column)), error);
            }
        });
        return new Decoded(canonical, types).sorted();
    }

    /** The error of a value that cannot be read, naming its column as the Python decoders do. */
    static CanonicalError columnError(String column, String declared, CanonicalError error) {
        return new CanonicalError("column " + Py.repr(column) + " (" + declared + "): " + error.getMessage());
    }
}
