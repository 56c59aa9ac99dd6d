package workbench.stream;

import org.apache.pinot.spi.stream.PartitionGroupConsumer;
import org.apache.pinot.spi.stream.PartitionGroupConsumptionStatus;
import org.apache.pinot.spi.stream.StreamConsumerFactory;
import org.apache.pinot.spi.stream.StreamMetadataProvider;


/**
 * A Kafka stream for Pinot's realtime ingestion: the workbench's stand-in for pinot-kafka-3.0's
 * {@code org.apache.pinot.plugin.stream.kafka30.KafkaConsumerFactory}, which Maven Central as served here does not
 * have at 1.5.1 ("Could not find artifact org.apache.pinot:pinot-kafka-3.0:jar:1.5.1", likewise pinot-kafka-base).
 *
 * <p>Named in a table's stream config as {@code stream.kafka.consumer.factory.class.name}; Pinot's controller (to
 * count partitions and find each one's start offset when it creates CONSUMING segments) and servers (to consume them)
 * make it through {@code StreamConsumerFactoryProvider}. What it does is pinot-kafka-3.0's at 1.5.1 for a plaintext
 * broker: one {@code KafkaConsumer<String, Bytes>} assigned to one partition, seeking only when the offset asked for is
 * not the next one, offsets as {@code LongMsgOffset}. Not carried over: SSL, partition subsets, isolation levels,
 * header metadata, lag by timestamp.
 */
public class KafkaConsumerFactory extends StreamConsumerFactory {
  @Override
  public StreamMetadataProvider createPartitionMetadataProvider(String clientId, int partition) {
    return new KafkaMetadataProvider(clientId, _streamConfig, partition);
  }

  @Override
  public StreamMetadataProvider createStreamMetadataProvider(String clientId) {
    return new KafkaMetadataProvider(clientId, _streamConfig, -1);
  }

  @Override
  public StreamMetadataProvider createStreamMetadataProvider(String clientId, boolean concurrentAccessExpected) {
    // KafkaConsumer is single-threaded: a provider shared across threads is synchronised (as kafka30's
    // SynchronizedKafkaStreamMetadataProvider); KafkaMetadataProvider's methods are all synchronized.
    return createStreamMetadataProvider(clientId);
  }

  @Override
  public PartitionGroupConsumer createPartitionGroupConsumer(String clientId,
      PartitionGroupConsumptionStatus partitionGroupConsumptionStatus) {
    return new KafkaPartitionConsumer(clientId, _streamConfig,
        partitionGroupConsumptionStatus.getStreamPartitionGroupId());
  }
}
