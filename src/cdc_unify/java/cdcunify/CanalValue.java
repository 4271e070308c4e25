package cdcunify;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;

/**
 * SQL function `cdc_canal_value(value)`: a landed Canal FlatMessage value (spec 004: one
 * FlatMessage object or a JSON array of them) read once into the fields macros/canal.sql checks,
 * with the JSON semantics of ExactJson. Its type is `CANAL_VALUE` of src/cdc_unify/jvm.py (field
 * order as built here); null for a null value. It decides nothing: which value or message is
 * quarantined, and why, stays in the model's SQL.
 */
public final class CanalValue implements UDF1<byte[], Row> {
    private static final long serialVersionUID = 1L;

    /** Message fields read as a name, code or number: struct<present, text, nested>. */
    private static final String[] SCALARS = {"type", "isDdl", "database", "table", "sql", "gtid", "es", "ts"};
    /** Fields the model only checks for presence (cdc_json_present), in the struct's order. */
    private static final String[] PRESENT = {"data", "old", "pkNames", "mysqlType", "sqlType", "tableChanges"};

    @Override
    public Row call(byte[] value) {
        if (value == null) {
            return null;
        }
        String text = ExactJson.utf8(value);
        if (text == null) {
            return RowFactory.create(false, null, null, null, null);
        }
        Object document = ExactJson.parse(text);
        if (document == null) {
            return RowFactory.create(true, false, null, null, null);
        }
        boolean isObject = ExactJson.object(document) != null;
        List<?> array = document instanceof List<?> list ? list : null;
        List<Row> messages = null;
        if (isObject) {
            messages = List.of(message(ExactJson.object(document)));
        } else if (array != null) {
            messages = new ArrayList<>(array.size());
            for (Object element : array) {
                Map<String, Object> object = ExactJson.object(element);
                messages.add(object == null ? null : message(object));
            }
        }
        return RowFactory.create(true, true, isObject, array == null ? null : array.size(), messages);
    }

    private static Row message(Map<String, Object> message) {
        List<Object> fields = new ArrayList<>(SCALARS.length + PRESENT.length + 9);
        for (String name : SCALARS) {
            Object field = message.get(name);
            fields.add(RowFactory.create(ExactJson.present(field), ExactJson.text(field), ExactJson.nested(field)));
        }
        for (String name : PRESENT) {
            fields.add(ExactJson.present(message.get(name)));
        }
        Object data = message.get("data");
        Object old = message.get("old");
        Object tableChanges = message.get("tableChanges");
        fields.add(ExactJson.textMaps(data));
        fields.add(ExactJson.nestedColumns(data));
        fields.add(ExactJson.textMaps(old));
        fields.add(ExactJson.nestedColumns(old));
        fields.add(ExactJson.textArray(message.get("pkNames")));
        fields.add(ExactJson.textMap(message.get("mysqlType")));
        fields.add(ExactJson.textMap(message.get("sqlType")));
        fields.add(ExactJson.textMaps(ExactJson.at(tableChanges, "table", "columns")));
        fields.add(ExactJson.textArray(ExactJson.at(tableChanges, "table", "primaryKeyColumnNames")));
        return RowFactory.create(fields.toArray());
    }
}
