package workbench.stream;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.pinot.spi.stream.LongMsgOffset;
import org.apache.pinot.spi.stream.OffsetCriteria;
import org.apache.pinot.spi.stream.StreamConfig;
import org.apache.pinot.spi.stream.StreamMetadataProvider;
import org.apache.pinot.spi.stream.StreamPartitionMsgOffset;
import org.apache.pinot.spi.stream.TransientConsumerException;


/**
 * Partition count, ids and offsets of a Kafka topic, as pinot-kafka-3.0's KafkaStreamMetadataProvider answers them:
 * the partitions from {@code partitionsFor}, the smallest and largest offsets from {@code beginningOffsets} and
 * {@code endOffsets}; an empty answer or a time-out is a TransientConsumerException (Pinot retries it).
 */
class KafkaMetadataProvider extends KafkaConnection implements StreamMetadataProvider {
  KafkaMetadataProvider(String clientId, StreamConfig streamConfig, int partition) {
    super(clientId, streamConfig, partition);
  }

  @Override
  public synchronized int fetchPartitionCount(long timeoutMillis) {
    return fetchPartitionIds(timeoutMillis).size();
  }

  @Override
  public synchronized Set<Integer> fetchPartitionIds(long timeoutMillis) {
    List<PartitionInfo> partitions;
    try {
      partitions = _consumer.partitionsFor(_topic, Duration.ofMillis(timeoutMillis));
    } catch (org.apache.kafka.common.errors.TimeoutException e) {
      throw new TransientConsumerException(e);
    }
    if (partitions == null || partitions.isEmpty()) {
      throw new TransientConsumerException(new RuntimeException("no partitions found for topic: " + _topic));
    }
    Set<Integer> ids = new TreeSet<>();
    partitions.forEach(p -> ids.add(p.partition()));
    return ids;
  }

  @Override
  public synchronized Map<Integer, StreamPartitionMsgOffset> fetchLatestStreamOffset(Set<Integer> partitionIds,
      long timeoutMillis) {
    List<TopicPartition> partitions = partitionIds.stream().map(p -> new TopicPartition(_topic, p)).toList();
    Map<Integer, StreamPartitionMsgOffset> latest = new HashMap<>();
    try {
      _consumer.endOffsets(partitions, Duration.ofMillis(timeoutMillis))
          .forEach((tp, offset) -> latest.put(tp.partition(), new LongMsgOffset(offset)));
    } catch (org.apache.kafka.common.errors.TimeoutException e) {
      throw new TransientConsumerException(e);
    }
    return latest;
  }

  @Override
  public synchronized StreamPartitionMsgOffset fetchStreamPartitionOffset(OffsetCriteria offsetCriteria,
      long timeoutMillis) {
    Duration timeout = Duration.ofMillis(timeoutMillis);
    try {
      if (offsetCriteria.isSmallest()) {
        return new LongMsgOffset(_consumer.beginningOffsets(List.of(_topicPartition), timeout).get(_topicPartition));
      }
      if (offsetCriteria.isLargest()) {
        return new LongMsgOffset(_consumer.endOffsets(List.of(_topicPartition), timeout).get(_topicPartition));
      }
    } catch (org.apache.kafka.common.errors.TimeoutException e) {
      throw new TransientConsumerException(e);
    }
    throw new IllegalArgumentException("offset criteria " + offsetCriteria + " not supported by the workbench's Kafka "
        + "stream: use smallest or largest");
  }

  @Override
  public boolean supportsOffsetLag() {
    return true;
  }

  @Override
  public synchronized void close() {
    super.close();
  }
}
