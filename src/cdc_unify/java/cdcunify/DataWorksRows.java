package cdcunify;

import static cdcunify.StagedRow.reason;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF3;

/**
 * SQL function `cdc_dataworks_rows(dialect, value, source_tz)`: a landed message of the DataWorks
 * family, spec 001's DataWorks JSON (`dataworks_json`) or spec 003's OMS Dataworks 2.0
 * (`oms_dataworks_json`), read once and turned into its staged row, so that each model is this
 * function, an explode and the staged select (docs/dialects/dataworks_json.md,
 * oms_dataworks_json.md). One message is one event; each value is decided on its own.
 *
 * Returns `DATAWORKS_ROWS` of src/cdc_unify/jvm.py: one struct. A message that cannot be staged,
 * or whose images its declared types cannot read, has its reason and nothing decoded; a null value
 * (a tombstone) has nothing at all. The fields are read as the SQL models before it read them,
 * through from_json of the value with its numbers as strings of their digits (FromJson), and the
 * checks that looked at the text (get_json_object) or the variant see the same parsed value.
 * `position_id` (the natural id: position|op) is null where the message has no position: the model
 * names such a message by its text without the emission time.
 */
public final class DataWorksRows implements UDF3<String, byte[], String, List<Row>> {
    private static final long serialVersionUID = 1L;

    /** The decoded columns of a row, event_kind to ddl_statement (DATAWORKS_ROWS). */
    private static final int WIDTH = 20;
    private static final long FIRST_MS = -62135596800000L; // 0001-01-01
    private static final long LAST_MS = 253402300799999L; // 9999-12-31 23:59:59.999
    private static final Pattern SEQUENCE = Pattern.compile("^[0-9]{1,38}$");
    private static final Pattern OMS_SCN = Pattern.compile("^[0-9]{1,16}$");
    private static final BigInteger SCN_SCALE = BigInteger.TEN.pow(16);
    private static final BigInteger NO_SCN = new BigInteger("9999999999999999");

    /** An op name: its event kind, its staged op and the images it needs. */
    private record Op(String kind, String staged, boolean needsBefore, boolean needsAfter) {}

    /** What a dialect of the family names its fields (the keys of the old models' `names`) and
     * its ops: `sequence` null when it sends none, `ops` how an unknown op is said not to be one. */
    private record Dialect(String columns, String image, String schema, String table, String key, String sequence,
            String ops, Map<String, Op> opTable) {}

    private static final Dialect DATAWORKS = new Dialect("dataColumn", "dataColumn", "schemaName", "tableName",
            "primaryKey", "sequenceId", "DataWorks", ops(
                    "UPDATE_BEFOR", new Op("ROW", "UPDATE_BEFORE", true, false),
                    "UPDATE_AFTER", new Op("ROW", "UPDATE_AFTER", false, true),
                    "MHEARTBEAT", new Op("HEARTBEAT", "HEARTBEAT", false, false)));
    private static final Dialect OMS_DATAWORKS = new Dialect("column", "data", "schema", "table", "pk", null,
            "Dataworks 2.0", ops(
                    "UPDATE", new Op("ROW", "UPDATE", false, true),
                    "HEARTBEAT", new Op("HEARTBEAT", "HEARTBEAT", false, false)));

    /** The dialect's own ops, then those both send (case-sensitive names). */
    private static Map<String, Op> ops(Object... own) {
        Map<String, Op> table = new LinkedHashMap<>();
        for (int i = 0; i < own.length; i += 2) {
            table.put((String) own[i], (Op) own[i + 1]);
        }
        table.put("INSERT", new Op("ROW", "INSERT", false, true));
        table.put("DELETE", new Op("ROW", "DELETE", true, false));
        String[][] transactions = {{"TRANSACTION_BEGIN", "BEGIN"}, {"TRANSACTION_END", "COMMIT"}, {"GTID", "GTID"},
            {"XACOMMIT", "XACOMMIT"}, {"XAROLLBACK", "XAROLLBACK"}};
        String[][] ddl = {{"CREATE", "CREATE"}, {"ALTER", "ALTER"}, {"ERASE", "DROP"}, {"QUERY", "QUERY"},
            {"TRUNCATE", "TRUNCATE"}, {"RENAME", "RENAME"}, {"CINDEX", "CREATE_INDEX"}, {"DINDEX", "DROP_INDEX"}};
        for (String[] op : transactions) {
            table.put(op[0], new Op("TRANSACTION", op[1], false, false));
        }
        for (String[] op : ddl) {
            table.put(op[0], new Op("DDL", op[1], false, false));
        }
        return table;
    }

    @Override
    public List<Row> call(String dialect, byte[] value, String sourceTz) {
        Dialect family = switch (dialect) {
            case "dataworks_json" -> DATAWORKS;
            case "oms_dataworks_json" -> OMS_DATAWORKS;
            default -> throw new IllegalArgumentException("cdc_dataworks_rows: not a DataWorks dialect: " + dialect);
        };
        if (value == null) {
            return StagedRow.tombstone(WIDTH);
        }
        String text = ExactJson.utf8(value);
        if (text == null) {
            return StagedRow.quarantined("invalid_utf8", "the value is not UTF-8 text", WIDTH);
        }
        Object document = ExactJson.parseInTextOrder(text);
        if (document == null) {
            return StagedRow.quarantined("invalid_json", "the value is not valid JSON", WIDTH);
        } else if (ExactJson.object(document) == null) {
            return StagedRow.quarantined("wrong_shape", "the value is not a JSON object", WIDTH);
        } else if (SparkText.nestedKeysCollide(text, document)) {
            return StagedRow.quarantined("invalid_json",
                    "the value is not valid JSON: two keys of an object are the same once a lone surrogate is '?'", WIDTH);
        }
        Message message = new Message(dialect, family, document);
        String[] error = message.error();
        if (error != null) {
            return StagedRow.quarantined(error[0], error[1], WIDTH);
        }
        return message.stage(sourceTz);
    }

    /** One message's fields, read as from_json of the old models' message schema read them. */
    private static final class Message {
        final String dialect;
        final Dialect family;
        final Object document;
        final Object payload;
        final Object source;
        final String rawOp;
        final Op op;
        final String eventTime;
        final Long eventMs;
        final Long systemMs;
        final Map<String, String> beforeValues;
        final Map<String, String> afterValues;
        final List<String> keyColumns;
        final String sequenceId;
        final String scn;
        final String ddlText;
        final List<Map<String, Object>> columns;

        Message(String dialect, Dialect family, Object document) {
            this.dialect = dialect;
            this.family = family;
            this.document = document;
            payload = ExactJson.object(ExactJson.at(document, "payload"));
            source = ExactJson.object(ExactJson.at(document, "schema", "source"));
            rawOp = FromJson.string(ExactJson.at(payload, "op"));
            op = rawOp == null ? null : family.opTable().get(rawOp);
            Object timestamp = ExactJson.object(ExactJson.at(payload, "timestamp"));
            eventTime = FromJson.string(ExactJson.at(timestamp, "eventTime"));
            eventMs = epochMs(eventTime);
            systemMs = epochMs(FromJson.string(ExactJson.at(timestamp, "systemTime")));
            beforeValues = image("before");
            afterValues = image("after");
            List<String> key = FromJson.strings(ExactJson.at(document, "schema", family.key()));
            keyColumns = SparkText.distinct(key == null ? null : key.stream().filter(c -> c != null).toList(), false);
            sequenceId = family.sequence() == null ? null : nullText(FromJson.string(ExactJson.at(payload, family.sequence())));
            scn = nullText(FromJson.string(ExactJson.at(payload, "scn")));
            ddlText = FromJson.string(ExactJson.at(ExactJson.object(ExactJson.at(payload, "ddl")), "text"));
            columns = FromJson.structs(ExactJson.at(document, "schema", family.columns()));
        }

        /** payload.<before|after>.<image>: the image's values. */
        private Map<String, String> image(String side) {
            return FromJson.stringMap(ExactJson.at(ExactJson.object(ExactJson.at(payload, side)), family.image()));
        }

        private String sourceName(String field) {
            return FromJson.string(ExactJson.at(source, field));
        }

        /** {error_code, error_detail} of the first reason the message cannot be staged; null if none. */
        String[] error() {
            String nestedName = nestedName();
            boolean row = op != null && op.kind().equals("ROW");
            if (!ExactJson.present(ExactJson.at(document, "payload"))) {
                return reason("missing_field", "payload is absent or null");
            } else if (payload == null) {
                return reason("wrong_shape", "payload is not an object");
            } else if (rawOp == null) {
                return reason("missing_field", "payload.op is absent or null");
            } else if (op == null) {
                return reason("unknown_op", "payload.op " + rawOp + " is not a " + family.ops() + " op");
            } else if (eventTime == null) {
                return reason("missing_field", "payload.timestamp.eventTime is absent or null");
            } else if (eventMs == null) {
                return reason("invalid_timestamp", "payload.timestamp.eventTime " + eventTime + " is not epoch ms");
            } else if (ExactJson.present(ExactJson.at(document, "schema", family.columns())) && columns == null) {
                return reason("wrong_shape", "schema." + family.columns() + " is not a list of {name, type}");
            } else if (nestedName != null) {
                return reason("wrong_shape", nestedName + " is a JSON object/array, not a name");
            } else if (row && (sourceName("dbName") == null || sourceName(family.table()) == null)) {
                return reason("missing_field", "schema.source.dbName/" + family.table() + " is absent");
            } else if (op.kind().equals("DDL") && ddlText == null) {
                return reason("missing_field", rawOp + " without payload.ddl.text");
            } else if (row && beforeValues == null && ExactJson.present(ExactJson.at(payload, "before"))) {
                return reason("wrong_shape", "payload.before is not {\"" + family.image() + "\": {...}}");
            } else if (row && afterValues == null && ExactJson.present(ExactJson.at(payload, "after"))) {
                return reason("wrong_shape", "payload.after is not {\"" + family.image() + "\": {...}}");
            } else if (op.needsAfter() && afterValues == null) {
                return reason("missing_field", rawOp + " without payload.after");
            } else if (op.needsBefore() && beforeValues == null) {
                return reason("missing_field", rawOp + " without payload.before");
            }
            return null;
        }

        /** The first of schema.source's name fields that is a JSON object or array. */
        private String nestedName() {
            for (String name : new String[] {"dbName", family.schema(), family.table()}) {
                if (ExactJson.nested(ExactJson.at(document, "schema", "source", name))) {
                    return "schema.source." + name;
                }
            }
            return null;
        }

        /** The message's staged row, or its quarantine row when an image cannot be read. */
        List<Row> stage(String sourceTz) {
            Map<String, String> sourceTypes = sourceTypes();
            boolean row = op.kind().equals("ROW");
            boolean ddl = op.kind().equals("DDL");
            CanonicalImage.Image before = row
                    ? CanonicalImage.image(dialect, beforeValues, sourceTypes, sourceTz) : CanonicalImage.Image.NONE;
            CanonicalImage.Image after = row ? CanonicalImage.image(dialect, afterValues, sourceTypes, sourceTz)
                    : ddl && sourceTypes != null ? CanonicalImage.image(dialect, Map.of(), sourceTypes, sourceTz)
                    : CanonicalImage.Image.NONE;
            if (before.error() != null || after.error() != null) {
                List<String> errors = new ArrayList<>(2);
                if (before.error() != null) {
                    errors.add("before: " + before.error());
                }
                if (after.error() != null) {
                    errors.add("after: " + after.error());
                }
                return StagedRow.quarantined("invalid_value", String.join("; ", errors), WIDTH);
            }
            String unreadable = unreadablePosition();
            if (unreadable != null) {
                return StagedRow.quarantined("wrong_shape", unreadable + " is not a number", WIDTH);
            }
            String dbType = FromJson.string(ExactJson.at(source, "dbType"));
            return List.of(StagedRow.decoded(0,
                    op.kind(), stagedOp(), dbType == null ? null : dbType.toLowerCase(Locale.ROOT),
                    sourceName("dbName"), sourceName(family.schema()), sourceName(family.table()),
                    keyColumns, keyColumns.isEmpty() ? "none" : "message",
                    row ? before.values() : null, row ? after.values() : null,
                    row ? false : null, row ? false : null,
                    row || ddl ? sourceTypes : null, row || ddl ? types(before.types(), after.types()) : null,
                    eventMs * 1000L, systemMs == null ? null : systemMs * 1000L,
                    sequenceId != null ? sequenceId : scn, positionNumber(), naturalId(),
                    ddl ? ddlText : null));
        }

        /** A whole UPDATE is spec 001's UPDATE_AFTER carrying both images. */
        private String stagedOp() {
            return rawOp.equals("UPDATE_AFTER") && beforeValues != null ? "UPDATE" : op.staged();
        }

        /** Column name -> declared type, the first declaration of a name winning. */
        private Map<String, String> sourceTypes() {
            if (columns == null) {
                return null;
            }
            Map<String, String> types = new LinkedHashMap<>();
            for (Map<String, Object> column : columns) {
                String name = column == null ? null : FromJson.string(column.get("name"));
                if (name != null && !types.containsKey(name)) {
                    types.put(name, FromJson.string(column.get("type")));
                }
            }
            return types;
        }

        /** spec 001: sequenceId, else scn, as a number. Spec 003: the event's millisecond, then the
         * scn within it (a message without one, or one of more than 16 digits, after every scn). */
        private String positionNumber() {
            if (family.sequence() != null) {
                BigInteger position = SparkText.finds(SEQUENCE, sequenceId) ? SparkText.foundNumber(SEQUENCE, sequenceId)
                        : SparkText.foundNumber(SEQUENCE, scn);
                return position == null ? null : position.toString();
            }
            BigInteger within = SparkText.foundNumber(OMS_SCN, scn);
            return BigInteger.valueOf(eventMs).multiply(SCN_SCALE).add(within == null ? NO_SCN : within).toString();
        }

        /** `payload.<field> <text>` of a position the pattern finds but no number reads (digits and a
         * final U+0085, U+2028 or U+2029: the old model's cast failed the whole build on it). */
        private String unreadablePosition() {
            if (family.sequence() == null) {
                return castFails(OMS_SCN, scn) ? "payload.scn " + scn : null;
            } else if (castFails(SEQUENCE, sequenceId)) {
                return "payload.sequenceId " + sequenceId;
            }
            return !SparkText.finds(SEQUENCE, sequenceId) && castFails(SEQUENCE, scn) ? "payload.scn " + scn : null;
        }

        /** The change's position and op, null for a message without a position. */
        private String naturalId() {
            String position = family.sequence() != null ? sequenceId : scn;
            return position == null ? null : position + "|" + rawOp;
        }
    }

    /** The types of a row's images: after's winning, before's keys first (map_zip_with). */
    private static Map<String, String> types(Map<String, String> before, Map<String, String> after) {
        if (before == null) {
            return after;
        } else if (after == null) {
            return before;
        }
        Map<String, String> types = new LinkedHashMap<>();
        before.forEach((column, type) -> types.put(column, after.get(column) != null ? after.get(column) : type));
        after.forEach(types::putIfAbsent);
        return types;
    }

    /** Epoch milliseconds a timestamp can hold (0001-01-01 .. 9999-12-31) as try_cast reads the
     * text; null for anything else. */
    private static Long epochMs(String text) {
        Long ms = SparkText.tryBigint(text);
        return ms != null && ms >= FIRST_MS && ms <= LAST_MS ? ms : null;
    }

    private static boolean castFails(Pattern pattern, String text) {
        return SparkText.finds(pattern, text) && SparkText.foundNumber(pattern, text) == null;
    }

    /** nullif(text, 'null'): the samples send the text "null" for a message without one. */
    private static String nullText(String text) {
        return "null".equals(text) ? null : text;
    }
}
