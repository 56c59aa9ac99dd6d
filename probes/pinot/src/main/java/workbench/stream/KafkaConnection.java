package workbench.stream;

import java.io.Closeable;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.BytesDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.pinot.spi.stream.StreamConfig;


/**
 * One Kafka consumer of one topic partition, made from a Pinot stream config as pinot-kafka-3.0's
 * KafkaPartitionLevelConnectionHandler makes it: bootstrap servers from {@code stream.kafka.broker.list}, every
 * {@code stream.kafka.consumer.prop.*} key passed on without its prefix (e.g. {@code auto.offset.reset}), string keys,
 * byte values, the client id Pinot gives, and the partition assigned (no consumer group).
 */
class KafkaConnection implements Closeable {
  static final String BROKER_LIST = "stream.kafka.broker.list";
  static final String CONSUMER_PROP_PREFIX = "stream.kafka.consumer.prop.";

  protected final String _topic;
  protected final TopicPartition _topicPartition;
  protected final KafkaConsumer<String, Bytes> _consumer;

  KafkaConnection(String clientId, StreamConfig streamConfig, int partition) {
    Map<String, String> config = streamConfig.getStreamConfigsMap();
    String brokers = config.get(BROKER_LIST);
    if (brokers == null) {
      throw new IllegalArgumentException("stream config of " + streamConfig.getTableNameWithType() + " has no "
          + BROKER_LIST);
    }
    Properties props = new Properties();
    config.forEach((key, value) -> {
      if (key.startsWith(CONSUMER_PROP_PREFIX)) {
        props.put(key.substring(CONSUMER_PROP_PREFIX.length()), value);
      }
    });
    props.remove("auto.offset.reset");  // Pinot names it smallest/largest; it seeks explicitly anyway
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, BytesDeserializer.class.getName());
    props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    _topic = streamConfig.getTopicName();
    _consumer = new KafkaConsumer<>(props);
    _topicPartition = new TopicPartition(_topic, Math.max(partition, 0));
    if (partition >= 0) {
      _consumer.assign(List.of(_topicPartition));
    }
  }

  @Override
  public void close() {
    _consumer.close();
  }
}
