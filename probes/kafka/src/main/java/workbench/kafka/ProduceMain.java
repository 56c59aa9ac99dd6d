package workbench.kafka;

import java.io.BufferedReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.ArrayList;
import java.util.List;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;


/**
 * Streams a file of JSON rows into a Kafka topic, one message per line, and ends.
 *
 * <p>Each message's key is the row's {@code KEY_FIELD} as text, so Kafka's default partitioner (murmur2 of the key)
 * puts every row of one key in one partition, which Pinot's upsert requires of the stream; the value is the line
 * unchanged. Sends are acknowledged by the broker ({@code acks=all}) before the count is printed.
 *
 * <p>With a {@code PARTITION_FIELD}, each row goes to the partition that field names (an int) instead, and the field
 * is removed from the message: a workload whose rows were already assigned their stream partitions (as the
 * workbench's generator does, by the table's partition function) is streamed as it was planned. Messages are sent
 * in file order, and Kafka's idempotent producer (the client's default) keeps that order within each partition, so
 * each partition's offsets follow the rows' order.
 *
 * <p>Usage: {@code ProduceMain BOOTSTRAP TOPIC KEY_FIELD ROWS.jsonl [PARTITION_FIELD]}; prints
 * {@code PRODUCED N partition=count,...} (every partition that got a message), or {@code FAILED ...} and exits 1.
 */
public final class ProduceMain {
  private ProduceMain() {
  }

  public static void main(String[] args) {
    try {
      if (args.length != 4 && args.length != 5) {
        throw new IllegalArgumentException("usage: ProduceMain BOOTSTRAP TOPIC KEY_FIELD ROWS.jsonl [PARTITION_FIELD]");
      }
      run(args[0], args[1], args[2], Path.of(args[3]), args.length == 5 ? args[4] : null);
    } catch (Throwable t) {
      System.out.println("FAILED " + t);
      System.out.flush();
      t.printStackTrace();
      System.exit(1);
    }
  }

  private static void run(String bootstrap, String topic, String keyField, Path rows, String partitionField)
      throws Exception {
    ObjectMapper json = new ObjectMapper();
    Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, "5",
        ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
        ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(config);
        BufferedReader reader = Files.newBufferedReader(rows, StandardCharsets.UTF_8)) {
      String line;
      while ((line = reader.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        JsonNode row = json.readTree(line);
        JsonNode key = row.get(keyField);
        if (key == null || key.isNull()) {
          throw new IllegalArgumentException(rows + ": a row without key field " + keyField + ": " + line);
        }
        Integer partition = null;
        if (partitionField != null) {
          JsonNode p = ((ObjectNode) row).remove(partitionField);
          if (p == null || !p.canConvertToInt()) {
            throw new IllegalArgumentException(rows + ": a row without an int partition field " + partitionField
                + ": " + line);
          }
          partition = p.intValue();
          line = json.writeValueAsString(row);
        }
        sent.add(producer.send(new ProducerRecord<>(topic, partition, key.asText(), line)));
      }
      producer.flush();
    }
    Map<Integer, Integer> perPartition = new TreeMap<>();
    for (Future<RecordMetadata> future : sent) {
      perPartition.merge(future.get().partition(), 1, Integer::sum);
    }
    StringBuilder counts = new StringBuilder();
    perPartition.forEach((p, n) -> counts.append(counts.length() == 0 ? "" : ",").append(p).append('=').append(n));
    System.out.println("PRODUCED " + sent.size() + " " + counts);
    System.out.flush();
  }
}
