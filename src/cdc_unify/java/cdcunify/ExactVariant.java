package cdcunify;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.types.variant.Variant;
import org.apache.spark.types.variant.VariantBuilder;
import org.apache.spark.unsafe.types.VariantVal;

/**
 * SQL function `cdc_exact_variant(value)`: a landed JSON value (bytes) as a variant whose numbers
 * are strings of their exact digits, in one pass: what the JSON staging models read (Spark's own
 * parse_json turns 12.50 into 12.5 and 9.99E-308 into a double, and refuses numbers of more than
 * 1,000 characters). The JSON rules are ExactJson's (one RFC 8259 value, no duplicate key); the
 * variant is built as parse_json builds it, its size limit kept. Null for a null value, bytes that
 * are not UTF-8, or text that is not one JSON value.
 */
public final class ExactVariant implements UDF1<byte[], VariantVal> {
    private static final long serialVersionUID = 1L;

    @Override
    public VariantVal call(byte[] value) {
        String text = value == null ? null : ExactJson.utf8(value);
        return text == null ? null : ExactJson.readOne(text, ExactVariant::variant);
    }

    /** The value at the parser, built as a variant (its size limit kept: result() throws past it). */
    private static VariantVal variant(JsonParser parser, JsonToken token) throws IOException {
        VariantBuilder builder = new VariantBuilder(false);
        build(builder, parser, token);
        Variant variant = builder.result();
        return new VariantVal(variant.getValue(), variant.getMetadata());
    }

    private static void build(VariantBuilder builder, JsonParser parser, JsonToken token) throws IOException {
        switch (token) {
            case START_OBJECT: {
                ArrayList<VariantBuilder.FieldEntry> fields = new ArrayList<>();
                int start = builder.getWritePos();
                for (JsonToken t = parser.nextToken(); t != JsonToken.END_OBJECT; t = parser.nextToken()) {
                    String key = parser.currentName();
                    JsonToken fieldToken = parser.nextToken();
                    int id = builder.addKey(key);
                    fields.add(new VariantBuilder.FieldEntry(key, id, builder.getWritePos() - start));
                    build(builder, parser, fieldToken);
                }
                builder.finishWritingObject(start, fields);
                break;
            }
            case START_ARRAY: {
                ArrayList<Integer> offsets = new ArrayList<>();
                int start = builder.getWritePos();
                for (JsonToken t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
                    offsets.add(builder.getWritePos() - start);
                    build(builder, parser, t);
                }
                builder.finishWritingArray(start, offsets);
                break;
            }
            case VALUE_STRING:
            case VALUE_NUMBER_INT:
            case VALUE_NUMBER_FLOAT:
                builder.appendString(parser.getText());
                break;
            case VALUE_TRUE:
                builder.appendBoolean(true);
                break;
            case VALUE_FALSE:
                builder.appendBoolean(false);
                break;
            case VALUE_NULL:
                builder.appendNull();
                break;
            default:
                throw new IOException("unexpected token " + token);
        }
    }
}
