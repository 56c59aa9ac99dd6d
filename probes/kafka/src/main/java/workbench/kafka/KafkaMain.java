package workbench.kafka;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool$;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;


/**
 * One Apache Kafka broker in KRaft mode (the same process is the broker and the only controller voter), as the
 * workbench's REALTIME tables stream from, in its own JVM.
 *
 * <p>As Kafka's own quick start does with {@code kafka-storage.sh format} and {@code kafka-server-start.sh}: a random
 * cluster id, the log directory formatted by Kafka's {@code StorageTool}, then {@code KafkaRaftServer}. Internal
 * topics have one replica (one broker); topics named on the command line are created through the admin client before
 * {@code READY} is printed, so a Pinot controller creating a table over them finds their partitions.
 *
 * <p>Usage: {@code KafkaMain WORK_DIR PORT CONTROLLER_PORT [TOPIC=PARTITIONS...]}; prints
 * {@code READY bootstrap=127.0.0.1:PORT} once the topics exist, or {@code FAILED ...} and exits 1; SIGTERM shuts the
 * broker down.
 */
public final class KafkaMain {
  private KafkaMain() {
  }

  public static void main(String[] args) {
    try {
      if (args.length < 3) {
        throw new IllegalArgumentException("usage: KafkaMain WORK_DIR PORT CONTROLLER_PORT [TOPIC=PARTITIONS...]");
      }
      run(args);
    } catch (Throwable t) {
      System.out.println("FAILED " + t);
      System.out.flush();
      t.printStackTrace();
      System.exit(1);
    }
  }

  private static void run(String[] args)
      throws Exception {
    File work = new File(args[0]);
    String bootstrap = "127.0.0.1:" + args[1];
    Properties props = brokerProperties(new File(work, "kafka-logs"), bootstrap, "127.0.0.1:" + args[2]);
    File propsFile = new File(work, "kafka-server.properties");
    work.mkdirs();
    try (OutputStream out = new FileOutputStream(propsFile)) {
      props.store(out, "workbench KafkaMain");
    }
    format(propsFile);
    KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(props, false), Time.SYSTEM);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.shutdown();
      server.awaitShutdown();
      stopped.countDown();
    }, "workbench-kafka-stop"));
    server.startup();
    createTopics(bootstrap, args);
    System.out.println("READY bootstrap=" + bootstrap);
    System.out.flush();
    stopped.await();
  }

  /** A combined broker and controller (node 1, the only voter), plaintext on loopback, one replica of everything. */
  static Properties brokerProperties(File logDir, String bootstrap, String controller) {
    Properties props = new Properties();
    props.putAll(Map.of(
        "process.roles", "broker,controller",
        "node.id", "1",
        "controller.quorum.voters", "1@" + controller,
        "listeners", "PLAINTEXT://" + bootstrap + ",CONTROLLER://" + controller,
        "advertised.listeners", "PLAINTEXT://" + bootstrap,
        "controller.listener.names", "CONTROLLER",
        "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name", "PLAINTEXT",
        "log.dirs", logDir.getPath()));
    props.putAll(Map.of(
        "offsets.topic.replication.factor", "1",
        "offsets.topic.num.partitions", "1",
        "transaction.state.log.replication.factor", "1",
        "transaction.state.log.min.isr", "1",
        "group.initial.rebalance.delay.ms", "0",
        "auto.create.topics.enable", "false",
        "num.partitions", "1"));
    return props;
  }

  /** {@code kafka-storage.sh format -t <random id> -c PROPS}; its output to stderr (stdout's first lines are ours). */
  private static void format(File propsFile)
      throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int status;
    try (PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8)) {
      status = StorageTool$.MODULE$.execute(
          new String[]{"format", "-t", Uuid.randomUuid().toString(), "-c", propsFile.getPath()}, print);
    }
    System.err.print(out.toString(StandardCharsets.UTF_8));
    if (status != 0) {
      throw new IllegalStateException("kafka-storage format exited " + status + ": " + out.toString(StandardCharsets.UTF_8));
    }
  }

  private static void createTopics(String bootstrap, String[] args)
      throws Exception {
    List<NewTopic> topics = new ArrayList<>();
    for (int i = 3; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("topic argument not TOPIC=PARTITIONS: " + args[i]);
      }
      topics.add(new NewTopic(args[i].substring(0, eq), Integer.parseInt(args[i].substring(eq + 1)), (short) 1));
    }
    if (topics.isEmpty()) {
      return;
    }
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
    }
  }
}
