package cdcunify;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The value decoders of the dialects that declare MySQL-style column types and send values in the
 * shared text forms (canonicalizers/_value_text.py `canonicalize_with`): canal_json (Canal's binary
 * text is ISO-8859-1), cloudcanal_json, oms_canal_json (TIMESTAMP as epoch seconds, DATETIME's zone
 * an annotation). Every column of the image and of the declared types gets a logical type, the
 * declared columns first.
 */
final class MysqlFamily {
    private MysqlFamily() {}

    static CanonicalImage.Decoder decoder(String dialect) {
        UnaryOperator<String> logicalType = CanonicalImage.cached(switch (dialect) {
            case "canal_json" -> MysqlTypes::canal;
            case "oms_canal_json" -> MysqlTypes::oms;
            default -> MysqlTypes::source;
        });
        return (values, declared, sourceTz) -> decode(dialect, logicalType, values, declared, sourceTz);
    }

    private static CanonicalImage.Decoded decode(String dialect, UnaryOperator<String> logicalType,
            Map<String, String> values, Map<String, String> declared, String sourceTz) {
        Map<String, String> types = new LinkedHashMap<>();
        declared.forEach((column, type) -> types.put(column, logicalType.apply(type)));
        values.keySet().forEach(column -> types.computeIfAbsent(column, c -> logicalType.apply(null)));
        Map<String, String> canonical = new LinkedHashMap<>();
        values.forEach((column, text) -> {
            try {
                canonical.put(column, text == null ? null : read(dialect, types.get(column), text, sourceTz));
            } catch (CanonicalError error) {
                String type = declared.get(column);
                throw CanonicalImage.columnError(column, type == null || type.isEmpty() ? "no declared type" : type, error);
            }
        });
        return new CanonicalImage.Decoded(canonical, types);
    }

    /** One value's canonical text: the dialect's own conventions, then the shared readers. */
    private static String read(String dialect, String logicalType, String text, String sourceTz) {
        String base = logicalType.startsWith("decimal") ? "decimal" : logicalType;
        if (dialect.equals("canal_json") && base.equals("binary")) {
            return CanonicalText.latin1Binary(text);
        }
        if (dialect.equals("oms_canal_json") && base.equals("timestamp")) {
            return omsTimestamp(text, sourceTz);
        }
        if (dialect.equals("oms_canal_json") && base.equals("datetime")) {
            return CanonicalText.datetime(Zoned.split(text).wall());
        }
        return CanonicalText.read(base, text, sourceTz);
    }

    /** OMS: epoch seconds with an optional fraction, or a datetime read in the source zone. */
    private static String omsTimestamp(String text, String sourceTz) {
        String stripped = Py.strip(text);
        if (stripped.equals("0000-00-00 00:00:00")) {
            throw new CanonicalError("OMS marks this TIMESTAMP as invalid (0000-00-00 00:00:00)");
        }
        if (Zoned.isEpochSeconds(stripped)) {
            return Zoned.epochText(stripped, 9, "s");
        }
        return Zoned.instantText(stripped, sourceTz);
    }
}
