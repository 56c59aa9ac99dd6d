package workbench.stream;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Bytes;
import org.apache.pinot.spi.stream.BytesStreamMessage;
import org.apache.pinot.spi.stream.LongMsgOffset;
import org.apache.pinot.spi.stream.MessageBatch;
import org.apache.pinot.spi.stream.PartitionGroupConsumer;
import org.apache.pinot.spi.stream.StreamConfig;
import org.apache.pinot.spi.stream.StreamMessageMetadata;
import org.apache.pinot.spi.stream.StreamPartitionMsgOffset;


/**
 * Messages of one Kafka partition for a CONSUMING segment, as pinot-kafka-3.0's KafkaPartitionLevelConsumer fetches
 * them: seek to the offset asked for unless it follows the last one fetched, poll for at most {@code timeoutMs}, each
 * record a {@code BytesStreamMessage} (key as UTF-8, value, ingestion time = the record's timestamp, offset and next
 * offset), tombstones skipped but counted, the next batch's offset one past the last record, and data loss when the
 * first record is past the offset asked for (read_uncommitted: offsets are consecutive).
 */
class KafkaPartitionConsumer extends KafkaConnection implements PartitionGroupConsumer {
  private long _lastFetchedOffset = -1;

  KafkaPartitionConsumer(String clientId, StreamConfig streamConfig, int partition) {
    super(clientId, streamConfig, partition);
  }

  @Override
  public synchronized MessageBatch<byte[]> fetchMessages(StreamPartitionMsgOffset startMsgOffset, int timeoutMs) {
    long startOffset = ((LongMsgOffset) startMsgOffset).getOffset();
    if (_lastFetchedOffset < 0 || _lastFetchedOffset != startOffset - 1) {
      _consumer.seek(_topicPartition, startOffset);
    }
    List<ConsumerRecord<String, Bytes>> records =
        _consumer.poll(Duration.ofMillis(timeoutMs)).records(_topicPartition);
    List<BytesStreamMessage> messages = new ArrayList<>(records.size());
    long firstOffset = -1;
    long nextOffset = startOffset;
    long bytes = 0;
    StreamMessageMetadata last = null;
    for (ConsumerRecord<String, Bytes> record : records) {
      if (firstOffset < 0) {
        firstOffset = record.offset();
      }
      StreamMessageMetadata metadata = new StreamMessageMetadata.Builder()
          .setRecordIngestionTimeMs(record.timestamp())
          .setOffset(new LongMsgOffset(record.offset()), new LongMsgOffset(record.offset() + 1))
          .setSerializedValueSize(record.serializedValueSize()).build();
      if (record.value() != null) {
        byte[] key = record.key() != null ? record.key().getBytes(StandardCharsets.UTF_8) : null;
        messages.add(new BytesStreamMessage(key, record.value().get(), metadata));
        bytes += Math.max(record.serializedValueSize(), 0);
      }
      last = metadata;
      _lastFetchedOffset = record.offset();
      nextOffset = record.offset() + 1;
    }
    return new Batch(messages, records.size(), nextOffset, firstOffset, last, firstOffset > startOffset, bytes);
  }

  /** One poll's messages (pinot-kafka-base's KafkaMessageBatch). */
  private record Batch(List<BytesStreamMessage> messages, int unfiltered, long nextOffset, long firstOffset,
                       StreamMessageMetadata last, boolean dataLoss, long bytes) implements MessageBatch<byte[]> {
    @Override
    public int getMessageCount() {
      return messages.size();
    }

    @Override
    public int getUnfilteredMessageCount() {
      return unfiltered;
    }

    @Override
    public BytesStreamMessage getStreamMessage(int index) {
      return messages.get(index);
    }

    @Override
    public StreamPartitionMsgOffset getOffsetOfNextBatch() {
      return new LongMsgOffset(nextOffset);
    }

    @Override
    public StreamPartitionMsgOffset getFirstMessageOffset() {
      return firstOffset >= 0 ? new LongMsgOffset(firstOffset) : null;
    }

    @Override
    public StreamMessageMetadata getLastMessageMetadata() {
      return last;
    }

    @Override
    public boolean hasDataLoss() {
      return dataLoss;
    }

    @Override
    public long getSizeInBytes() {
      return bytes;
    }
  }
}
