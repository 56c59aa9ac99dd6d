package workbench.stream;

import java.util.Map;
import java.util.Set;
import org.apache.pinot.spi.data.readers.BaseRecordExtractor;
import org.apache.pinot.spi.data.readers.GenericRow;
import org.apache.pinot.spi.data.readers.RecordExtractorConfig;
import org.apache.pinot.spi.stream.StreamMessageDecoder;
import org.apache.pinot.spi.utils.JsonUtils;


/**
 * A JSON object per message into a row: the stand-in for pinot-json's
 * {@code org.apache.pinot.plugin.inputformat.json.JSONMessageDecoder} (not served here at 1.5.1, "Could not find
 * artifact org.apache.pinot:pinot-json:jar:1.5.1"), doing what it and its JSONRecordExtractor do at 1.5.1: parse with
 * Pinot's {@code JsonUtils.bytesToMap}, then each field Pinot reads (every field when it names none) through the base
 * record extractor's {@code convert} (nested objects to maps, arrays to multi-values); number types are fixed later by
 * Pinot's data type transformer.
 */
public class JsonMessageDecoder implements StreamMessageDecoder<byte[]> {
  private final Extractor _extractor = new Extractor();

  @Override
  public void init(Map<String, String> props, Set<String> fieldsToRead, String topicName) {
    _extractor.init(fieldsToRead, null);
  }

  @Override
  public GenericRow decode(byte[] payload, GenericRow destination) {
    return decode(payload, 0, payload.length, destination);
  }

  @Override
  public GenericRow decode(byte[] payload, int offset, int length, GenericRow destination) {
    try {
      return _extractor.extract(JsonUtils.bytesToMap(payload, offset, length), destination);
    } catch (Exception e) {
      throw new RuntimeException("Caught exception while decoding JSON record with payload: "
          + new String(payload, offset, length, java.nio.charset.StandardCharsets.UTF_8), e);
    }
  }

  private static final class Extractor extends BaseRecordExtractor<Map<String, Object>> {
    private Set<String> _fields = Set.of();

    @Override
    public void init(Set<String> fields, RecordExtractorConfig config) {
      _fields = fields == null ? Set.of() : Set.copyOf(fields);
    }

    @Override
    public GenericRow extract(Map<String, Object> from, GenericRow to) {
      Iterable<String> names = _fields.isEmpty() ? from.keySet() : _fields;
      for (String name : names) {
        Object value = from.get(name);
        to.putValue(name, value != null ? convert(value) : null);
      }
      return to;
    }
  }
}
