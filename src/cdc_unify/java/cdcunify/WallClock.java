package cdcunify;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;

/** A zone-less wall clock in the source zone as the SQL models read it: Spark's parse of the text,
 * then to_utc_timestamp, which moves a time in a gap of the zone forward by the gap and gives one in
 * an overlap the earlier offset (java.time's `atZone`). */
final class WallClock {
    private WallClock() {}

    /** The text parsed whole by `format` (a STRICT formatter: a date or time the calendar does not
     * have is no time) as epoch microseconds in `zone`; null when it cannot be read. */
    static Long utcMicros(String text, DateTimeFormatter format, ZoneId zone) {
        try {
            Instant instant = LocalDateTime.parse(text, format).atZone(zone).toInstant();
            return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1000L);
        } catch (DateTimeException | ArithmeticException e) {
            return null;
        }
    }
}
