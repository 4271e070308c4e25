package cdcunify;

import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

/** A staged row as the message functions (the cdcunify.*Rows classes) return it: row_index, error_code, error_detail, then the function's decoded columns. */
final class StagedRow {
    private StagedRow() {}

    /** A decoded row. */
    static Row decoded(int rowIndex, Object... columns) {
        return RowFactory.create(head(rowIndex, null, null, columns));
    }

    /** A tombstone's one row: nothing decoded. */
    static List<Row> tombstone(int width) {
        return List.of(decoded(0, new Object[width]));
    }

    /** A quarantined value's one row: its reason, nothing decoded. */
    static List<Row> quarantined(String code, String detail, int width) {
        return List.of(RowFactory.create(head(0, code, detail, new Object[width])));
    }

    /** {error_code, error_detail}: the reason a message is quarantined. */
    static String[] reason(String code, String detail) {
        return new String[] {code, detail};
    }

    private static Object[] head(int rowIndex, String code, String detail, Object[] columns) {
        Object[] fields = new Object[columns.length + 3];
        fields[0] = rowIndex;
        fields[1] = code;
        fields[2] = detail;
        System.arraycopy(columns, 0, fields, 3, columns.length);
        return fields;
    }
}
