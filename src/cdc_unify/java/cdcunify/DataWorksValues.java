package cdcunify;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * DataWorks JSON images (canonicalizers/dataworks_json.py, spec 001): six declared types, BOOLEAN,
 * LONG, DOUBLE, DATE (13-digit epoch milliseconds: an instant), BYTES (base64), STRING; any other
 * declared type, or none, is kept as sent. Both maps in key order.
 */
final class DataWorksValues {
    private DataWorksValues() {}

    private static final Map<String, String> LOGICAL_TYPES = Map.of(
            "BOOLEAN", "boolean", "LONG", "bigint", "DOUBLE", "double", "DATE", "timestamp", "BYTES", "binary",
            "STRING", "string");
    private static final BigDecimal MIN_EPOCH_MS = BigDecimal.valueOf(-62_135_596_800_000L);
    private static final BigDecimal MAX_EPOCH_MS = BigDecimal.valueOf(253_402_300_799_999L);

    static String logicalType(String declared) {
        return LOGICAL_TYPES.getOrDefault(Py.strip(declared == null ? "" : declared).toUpperCase(Locale.ROOT), "string");
    }

    private static final UnaryOperator<String> LOGICAL_TYPE = CanonicalImage.cached(DataWorksValues::logicalType);

    static CanonicalImage.Decoded decode(Map<String, String> values, Map<String, String> declared, String sourceTz) {
        return CanonicalImage.readEach(values, declared, LOGICAL_TYPE, (kind, text) -> new String[] {read(kind, text), kind});
    }

    private static String read(String kind, String text) {
        return switch (kind) {
            case "boolean" -> CanonicalText.bool(text);
            case "bigint" -> CanonicalText.integer(text);
            case "double" -> CanonicalText.doubleText(text);
            case "timestamp" -> epochMillis(text);
            case "binary" -> CanonicalText.base64(text);
            default -> text;
        };
    }

    /** Epoch milliseconds (`1590315269000`) -> canonical instant; only the instants of years 1..9999. */
    private static String epochMillis(String text) {
        BigDecimal millis = CanonicalText.decimalValue(text).toBigDecimal();
        if (millis.compareTo(MIN_EPOCH_MS) < 0 || millis.compareTo(MAX_EPOCH_MS) > 0) {
            throw new CanonicalError(Py.repr(text) + " is out of range as epoch milliseconds");
        }
        return Zoned.epochText(text, 6, "ms");
    }
}
