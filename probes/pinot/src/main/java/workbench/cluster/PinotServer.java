package workbench.cluster;

import java.io.File;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.helix.HelixManager;
import org.apache.pinot.core.data.manager.InstanceDataManager;
import org.apache.pinot.core.data.manager.offline.OfflineTableDataManager;
import org.apache.pinot.segment.local.indexsegment.immutable.ImmutableSegmentLoader;
import org.apache.pinot.segment.local.segment.index.loader.IndexLoadingConfig;
import org.apache.pinot.segment.local.utils.SegmentLocks;
import org.apache.pinot.segment.local.utils.SegmentReloadSemaphore;
import org.apache.pinot.segment.local.utils.ServerReloadJobStatusCache;
import org.apache.pinot.segment.spi.ImmutableSegment;
import org.apache.pinot.spi.config.table.TableConfig;
import org.apache.pinot.spi.data.Schema;
import org.apache.pinot.spi.env.PinotConfiguration;
import org.apache.pinot.spi.utils.CommonConstants;
import org.apache.pinot.spi.utils.JsonUtils;


/**
 * One Pinot server's single-stage query path as a process of its own: Netty in, scheduler, executor, Netty out.
 *
 * <p>What runs is Pinot's own: {@link QueryServer} (Netty) with Pinot's {@link InstanceRequestHandler}, the
 * {@link QueryScheduler} that {@link QuerySchedulerFactory} makes from the {@code pinot.query.scheduler.*} keys,
 * {@link ServerQueryExecutorV1Impl} initialised from the {@code pinot.server.query.executor.*} keys, and an
 * {@link OfflineTableDataManager} holding segments loaded by {@link ImmutableSegmentLoader}. This mirrors
 * pinot-server's {@code ServerInstance} constructor at 1.5.1, which is not on Maven Central as served here.
 *
 * <p>What is not Pinot's: Helix. Segments come from a directory instead of ZooKeeper state transitions, so two
 * small stand-ins remain, each a {@link Proxy} that throws on any method it does not answer (a call we did not
 * foresee fails loudly instead of returning a made-up value):
 * <ul>
 *   <li>{@link InstanceDataManager} (pinot-server's is {@code HelixInstanceDataManager}): answers
 *   {@code getInstanceId}, {@code getTableDataManager} and {@code getAllTables}, the methods
 *   {@code ServerQueryExecutorV1Impl}/{@code SingleTableExecutionInfo} call on the single-stage path.</li>
 *   <li>{@link HelixManager}: answers {@code getHelixPropertyStore} (null: no ZooKeeper; the table data manager
 *   only reads it to download segments or fetch ZK metadata, neither done here) and {@code getInstanceName}.</li>
 * </ul>
 *
 * <p>Usage: {@code PinotServer TABLE_CONFIG.json SCHEMA.json SEGMENTS_DIR HOST PORT [KEY=VALUE...]}; the keys are
 * Pinot server config keys ({@code pinot.query.scheduler.name=bounded_fcfs},
 * {@code pinot.query.scheduler.query_runner_threads=2}, {@code pinot.server.query.executor.timeout=...}). Pinot's
 * {@code QueryServer} binds the port on every address; HOST names the instance ({@code Server_HOST_PORT}) and is the
 * address the broker connects to. Prints {@code READY HOST:PORT} on stdout once serving, then serves until killed
 * (SIGTERM stops the Netty server and scheduler first).
 */
public final class PinotServer {
  private PinotServer() {
  }

  public static void main(String[] args) {
    JvmMain.main(() -> {
      if (args.length < 5) {
        throw new IllegalArgumentException(
            "usage: PinotServer TABLE_CONFIG.json SCHEMA.json SEGMENTS_DIR HOST PORT [KEY=VALUE...]");
      }
      run(args);
    });
  }

  private static void run(String[] args)
      throws Exception {
    TableConfig tableConfig = JsonUtils.fileToObject(new File(args[0]), TableConfig.class);
    Schema schema = Schema.fromFile(new File(args[1]));
    File segmentsDir = new File(args[2]);
    String host = args[3];
    int port = Integer.parseInt(args[4]);
    PinotConfiguration serverConf = new PinotConfiguration(JvmMain.keyValues(args, 5));
    String instanceId = CommonConstants.Helix.PREFIX_OF_SERVER_INSTANCE + host + "_" + port;
    String tableNameWithType = tableConfig.getTableName();

    // The table data manager: Pinot's own OfflineTableDataManager, initialised as DefaultTableDataManagerProvider
    // does, then given each segment loaded as a server loads an ONLINE segment.
    File dataDir = new File(segmentsDir.getParentFile(), "server-" + host + "-" + port);
    StandaloneInstanceDataManagerConfig instanceConfig =
        new StandaloneInstanceDataManagerConfig(serverConf, instanceId, dataDir.getPath());
    HelixManager helix = helixWithoutZooKeeper(instanceId);
    ExecutorService reloadExecutor = Executors.newSingleThreadExecutor();
    OfflineTableDataManager tableDataManager = new OfflineTableDataManager();
    tableDataManager.init(instanceConfig, helix, SegmentLocks.create(), tableConfig, schema,
        new SegmentReloadSemaphore(1), reloadExecutor, null, null, null, false,
        new ServerReloadJobStatusCache(instanceId));
    tableDataManager.start();
    IndexLoadingConfig indexLoadingConfig = new IndexLoadingConfig(tableConfig, schema);
    List<String> loaded = new ArrayList<>();
    File[] dirs = segmentsDir.listFiles(File::isDirectory);
    if (dirs == null || dirs.length == 0) {
      throw new IllegalArgumentException("no segment directories in " + segmentsDir);
    }
    for (File dir : dirs) {
      ImmutableSegment segment = ImmutableSegmentLoader.load(dir, indexLoadingConfig);
      tableDataManager.addSegment(segment, null);
      loaded.add(segment.getSegmentName());
    }
    InstanceDataManager instanceDataManager = ServerQueryPath.instanceDataManager(instanceId,
        name -> tableNameWithType.equals(name) ? tableDataManager : null, () -> Set.of(tableNameWithType));
    ServerQueryPath queryPath = ServerQueryPath.start(serverConf, instanceId, port, instanceDataManager);
    JvmMain.serve("READY " + host + ":" + port + " scheduler=" + queryPath.schedulerName() + " segments="
        + loaded.size() + " instance=" + instanceId, "workbench-server-stop", () -> {
          queryPath.stop();
          tableDataManager.shutDown();
          reloadExecutor.shutdownNow();
        });
  }

  private static HelixManager helixWithoutZooKeeper(String instanceId) {
    InvocationHandler handler = (proxy, method, methodArgs) -> {
      switch (method.getName()) {
        case "getHelixPropertyStore":
          return null;
        case "getInstanceName":
          return instanceId;
        case "toString":
          return "HelixManager(no ZooKeeper, " + instanceId + ")";
        case "hashCode":
          return System.identityHashCode(proxy);
        case "equals":
          return proxy == methodArgs[0];
        default:
          throw new UnsupportedOperationException("HelixManager." + method.getName()
              + " called: this server runs without Helix/ZooKeeper");
      }
    };
    return (HelixManager) Proxy.newProxyInstance(PinotServer.class.getClassLoader(),
        new Class<?>[]{HelixManager.class}, handler);
  }
}
