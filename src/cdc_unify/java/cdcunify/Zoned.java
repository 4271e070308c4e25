package cdcunify;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Instants and zoned datetimes from text (canonicalizers/_value_text.py: `zone_of`,
 * `split_zoned`, `instant_text`, `zoned_text`; canonical.py: `fmt_instant`,
 * `instant_from_epoch_text`). A wall clock takes the offset its zone has at that wall clock; in a
 * fold the earlier one, in a gap the one before it (Python's fold=0, java.time's `ofLocal`).
 */
final class Zoned {
    private Zoned() {}

    private static final int FLAGS = Pattern.UNICODE_CHARACTER_CLASS;
    private static final Pattern OFFSET_ZONE = Py.regex(
            "(?:GMT|UTC)?([+-])(\\d{1,2})(?::?(\\d{2}))?", FLAGS | Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE);
    private static final Pattern ZONED = Py.regex(
            "(\\d{4})-(\\d{2})-(\\d{2})[ T](\\d{2}):(\\d{2}):(\\d{2})(?:\\.(\\d{1,9}))?"
                    + "\\s*(Z|[+-]\\d{1,2}(?::?\\d{2})?)?(?:\\[([^\\]]+)\\]|\\s+(\\S+))?", FLAGS);
    private static final Pattern EPOCH_SECONDS = Py.regex("-?\\d+(?:\\.\\d{1,9})?", FLAGS);
    private static final Set<String> REGIONS = ZoneId.getAvailableZoneIds();
    private static final Map<String, ZoneId> ZONES = new ConcurrentHashMap<>();
    private static final long MIN_EPOCH_SECOND = -62_135_596_800L; // 0001-01-01T00:00:00Z
    private static final long MAX_EPOCH_SECOND = 253_402_300_799L; // 9999-12-31T23:59:59Z

    /** A datetime text: its wall clock, and its offset and region as sent (either may be null). */
    record Text(CanonicalText.Wall wall, String offset, String region) {
        /** The zone that fixes the instant: the offset (it decides inside a fold), else the region. */
        String zone(String defaultZone) {
            return offset != null ? offset : region != null ? region : defaultZone;
        }
    }

    /** A zone as sent: `Z`, an offset (`+08:00`, `+0800`, `+8`, `GMT+8`, at most 18 hours) or a region id. */
    static ZoneId zone(String text) {
        ZoneId known = ZONES.get(text);
        if (known != null) {
            return known;
        }
        ZoneId zone = readZone(text);
        if (ZONES.size() < 10_000) {
            ZONES.put(text, zone);
        }
        return zone;
    }

    private static ZoneId readZone(String text) {
        String name = Py.strip(text);
        if (name.equals("Z")) {
            return ZoneOffset.UTC;
        }
        Matcher m = OFFSET_ZONE.matcher(name);
        if (m.matches()) {
            int hours = Integer.parseInt(m.group(2));
            int minutes = m.group(3) == null ? 0 : Integer.parseInt(m.group(3));
            if (minutes > 59 || hours * 60 + minutes > 18 * 60) {
                throw new CanonicalError("time zone offset " + Py.repr(text) + " is out of range");
            }
            int seconds = (hours * 3600 + minutes * 60) * (m.group(1).equals("-") ? -1 : 1);
            return ZoneOffset.ofTotalSeconds(seconds);
        }
        if (!REGIONS.contains(name)) {
            throw new CanonicalError("unknown time zone " + Py.repr(text));
        }
        return ZoneId.of(name);
    }

    static Text split(String text) {
        String stripped = Py.strip(text);
        int[] fields = CanonicalText.asciiDatetime(stripped, 0);
        if (fields != null && fields[7] == stripped.length()) {
            return new Text(CanonicalText.wall(stripped, fields), null, null);
        }
        Matcher m = ZONED.matcher(stripped);
        if (!m.matches()) {
            throw new CanonicalError(Py.repr(text) + " is not a datetime YYYY-MM-DD HH:MM:SS[.f] [zone]");
        }
        String region = m.group(9) != null ? m.group(9) : m.group(10);
        String datetime = m.group().substring(0, m.group(7) != null ? m.end(7) : m.end(6));
        return new Text(CanonicalText.wall(datetime, m), m.group(8), region);
    }

    /** The UTC instant of a wall clock in a zone, `YYYY-MM-DDTHH:MM:SS[.f]Z`; years 1..9999 in UTC. */
    static String instant(CanonicalText.Wall wall, ZoneId zone) {
        long epochSecond = zone instanceof ZoneOffset offset
                ? wall.time().toEpochSecond(offset)
                : ZonedDateTime.ofLocal(wall.time(), zone, null).toEpochSecond();
        if (epochSecond < MIN_EPOCH_SECOND || epochSecond > MAX_EPOCH_SECOND) {
            throw new CanonicalError(isoformat(wall.time(), zone.getRules().getOffset(wall.time()))
                    + " is outside years 1..9999 in UTC");
        }
        return utc(epochSecond, wall.nanos());
    }

    private static String utc(long epochSecond, int nanos) {
        LocalDateTime utc = LocalDateTime.ofEpochSecond(epochSecond, 0, ZoneOffset.UTC);
        return CanonicalText.date(utc.getYear(), utc.getMonthValue(), utc.getDayOfMonth()) + "T"
                + CanonicalText.time(utc.getHour(), utc.getMinute(), utc.getSecond(), nanos) + "Z";
    }

    /** Python's `datetime.isoformat()` of an aware wall clock to the second. */
    private static String isoformat(LocalDateTime wall, ZoneOffset offset) {
        int total = offset.getTotalSeconds();
        int magnitude = Math.abs(total);
        String text = String.format("%s%02d:%02d", total < 0 ? "-" : "+", magnitude / 3600, magnitude / 60 % 60);
        if (magnitude % 60 != 0) {
            text += String.format(":%02d", magnitude % 60);
        }
        return CanonicalText.date(wall.getYear(), wall.getMonthValue(), wall.getDayOfMonth()) + "T"
                + CanonicalText.time(wall.getHour(), wall.getMinute(), wall.getSecond(), 0) + text;
    }

    /** A datetime text -> canonical instant: its own offset or zone if it has one, else `defaultZone`. */
    static String instantText(String text, String defaultZone) {
        Text zoned = split(text);
        return instant(zoned.wall(), zone(zoned.zone(defaultZone)));
    }

    /** A zoned datetime: the UTC instant, then the zone as sent (region, else offset, else the default). */
    static String zonedText(String text, String defaultZone) {
        return zoned(text, defaultZone)[0];
    }

    /** {canonical text, logical type}: a zoned datetime labelled with its zone as sent, or a wall
     * clock (`datetime`) when the text has no zone and there is no default. */
    static String[] zoned(String text, String defaultZone) {
        Text zoned = split(text);
        String zone = zoned.zone(defaultZone);
        if (zone == null) {
            return new String[] {CanonicalText.datetime(zoned.wall()), "datetime"};
        }
        String label = zoned.region() != null ? zoned.region() : zoned.offset() != null ? zoned.offset() : defaultZone;
        return new String[] {instant(zoned.wall(), zone(zone)) + "[" + label + "]", "zoned_datetime"};
    }

    /** Epoch seconds with at most 9 fraction digits, as OMS Canal sends a TIMESTAMP. */
    static boolean isEpochSeconds(String stripped) {
        return EPOCH_SECONDS.matcher(stripped).matches();
    }

    /** Epoch text in a unit of 10^-(9 - nanosPower) s (`s`: 9, `ms`: 6), optionally with a fraction
     * (`1606233662.012345` seconds) -> canonical instant. */
    static String epochText(String text, int nanosPower, String unit) {
        // Python multiplies in the decimal module's default context: 28 significant digits.
        BigDecimal nanos = CanonicalText.decimalValue(text).toBigDecimal().movePointRight(nanosPower)
                .round(new MathContext(28, RoundingMode.HALF_EVEN));
        if (nanos.signum() != 0 && nanos.stripTrailingZeros().scale() > 0) {
            throw new CanonicalError(Py.repr(text) + " has more precision than nanoseconds");
        }
        BigInteger[] split = nanos.toBigIntegerExact().divideAndRemainder(BigInteger.valueOf(1_000_000_000));
        BigInteger seconds = split[0];
        BigInteger fraction = split[1];
        if (fraction.signum() < 0) {
            seconds = seconds.subtract(BigInteger.ONE);
            fraction = fraction.add(BigInteger.valueOf(1_000_000_000));
        }
        if (seconds.compareTo(BigInteger.valueOf(MIN_EPOCH_SECOND)) < 0
                || seconds.compareTo(BigInteger.valueOf(MAX_EPOCH_SECOND)) > 0) {
            throw new CanonicalError(Py.repr(text) + " is out of range as epoch " + unit);
        }
        return utc(seconds.longValueExact(), fraction.intValueExact());
    }
}
