package workbench.cluster;

import java.io.File;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAccumulator;
import org.apache.helix.HelixManager;
import org.apache.pinot.common.function.FunctionRegistry;
import org.apache.pinot.common.metrics.ServerMetrics;
import org.apache.pinot.core.data.manager.InstanceDataManager;
import org.apache.pinot.core.data.manager.offline.OfflineTableDataManager;
import org.apache.pinot.core.operator.transform.function.TransformFunctionFactory;
import org.apache.pinot.core.query.executor.QueryExecutor;
import org.apache.pinot.core.query.executor.ServerQueryExecutorV1Impl;
import org.apache.pinot.core.query.logger.ServerQueryLogger;
import org.apache.pinot.core.query.scheduler.QueryScheduler;
import org.apache.pinot.core.query.scheduler.QuerySchedulerFactory;
import org.apache.pinot.core.transport.InstanceRequestHandler;
import org.apache.pinot.core.transport.QueryServer;
import org.apache.pinot.segment.local.data.manager.TableDataManager;
import org.apache.pinot.segment.local.indexsegment.immutable.ImmutableSegmentLoader;
import org.apache.pinot.segment.local.segment.index.loader.IndexLoadingConfig;
import org.apache.pinot.segment.local.utils.SegmentLocks;
import org.apache.pinot.segment.local.utils.SegmentReloadSemaphore;
import org.apache.pinot.segment.local.utils.ServerReloadJobStatusCache;
import org.apache.pinot.segment.spi.ImmutableSegment;
import org.apache.pinot.server.access.AccessControl;
import org.apache.pinot.server.access.AllowAllAccessFactory;
import org.apache.pinot.spi.accounting.ThreadAccountant;
import org.apache.pinot.spi.accounting.ThreadAccountantUtils;
import org.apache.pinot.spi.accounting.ThreadResourceUsageProvider;
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
    try {
      if (args.length < 5) {
        throw new IllegalArgumentException(
            "usage: PinotServer TABLE_CONFIG.json SCHEMA.json SEGMENTS_DIR HOST PORT [KEY=VALUE...]");
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
    TableConfig tableConfig = JsonUtils.fileToObject(new File(args[0]), TableConfig.class);
    Schema schema = Schema.fromFile(new File(args[1]));
    File segmentsDir = new File(args[2]);
    String host = args[3];
    int port = Integer.parseInt(args[4]);
    Map<String, Object> properties = new HashMap<>();
    for (int i = 5; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("config argument not KEY=VALUE: " + args[i]);
      }
      properties.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    PinotConfiguration serverConf = new PinotConfiguration(properties);
    String instanceId = CommonConstants.Helix.PREFIX_OF_SERVER_INSTANCE + host + "_" + port;
    String tableNameWithType = tableConfig.getTableName();
    ServerMetrics serverMetrics = ServerMetrics.get();  // Pinot's no-op registry: no metrics reporter here
    ThreadAccountant accountant = ThreadAccountantUtils.getNoOpAccountant();

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
    InstanceDataManager instanceDataManager = instanceDataManager(instanceId, tableNameWithType, tableDataManager);

    // As pinot-server's BaseServerStarter: per-thread CPU time measurement (threadCpuTimeNs in each response's
    // metadata) only when the server config turns it on.
    ThreadResourceUsageProvider.setThreadCpuTimeMeasurementEnabled(serverConf.getProperty(
        CommonConstants.Server.CONFIG_OF_ENABLE_THREAD_CPU_TIME_MEASUREMENT,
        CommonConstants.Server.DEFAULT_ENABLE_THREAD_CPU_TIME_MEASUREMENT));
    // As pinot-server's ServerInstance: query logger and function registry first, then executor, scheduler, Netty.
    ServerQueryLogger.init(
        serverConf.getProperty(CommonConstants.Server.CONFIG_OF_QUERY_LOG_MAX_RATE,
            CommonConstants.Server.DEFAULT_QUERY_LOG_MAX_RATE),
        CommonConstants.Server.DEFAULT_QUERY_LOG_DROPPED_REPORT_MAX_RATE, serverMetrics);
    FunctionRegistry.init();
    TransformFunctionFactory.init(Set.of());
    QueryExecutor queryExecutor = new ServerQueryExecutorV1Impl();
    queryExecutor.init(serverConf.subset(CommonConstants.Server.QUERY_EXECUTOR_CONFIG_PREFIX), instanceDataManager,
        serverMetrics);
    QueryScheduler scheduler = QuerySchedulerFactory.create(serverConf.subset(CommonConstants.PINOT_QUERY_SCHEDULER_PREFIX),
        instanceId, queryExecutor, accountant, new LongAccumulator(Long::max, 0));
    AccessControl accessControl = new AllowAllAccessFactory().create();
    InstanceRequestHandler handler =
        new InstanceRequestHandler(instanceId, serverConf, scheduler, accessControl, accountant);
    QueryServer queryServer = new QueryServer(port, null, handler);

    queryExecutor.start();
    scheduler.start();
    queryServer.start();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      queryServer.shutDown();
      scheduler.stop();
      queryExecutor.shutDown();
      tableDataManager.shutDown();
      reloadExecutor.shutdownNow();
      stopped.countDown();
    }, "workbench-server-stop"));
    System.out.println("READY " + host + ":" + port + " scheduler=" + scheduler.name() + " segments=" + loaded.size()
        + " instance=" + instanceId);
    System.out.flush();
    stopped.await();
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

  private static InstanceDataManager instanceDataManager(String instanceId, String tableNameWithType,
      TableDataManager tableDataManager) {
    InvocationHandler handler = (proxy, method, methodArgs) -> {
      switch (method.getName()) {
        case "getInstanceId":
          return instanceId;
        case "getTableDataManager":
          return tableNameWithType.equals(methodArgs[0]) ? tableDataManager : null;
        case "getAllTables":
          return Set.of(tableNameWithType);
        case "toString":
          return "InstanceDataManager(" + instanceId + ", " + tableNameWithType + ")";
        case "hashCode":
          return System.identityHashCode(proxy);
        case "equals":
          return proxy == methodArgs[0];
        default:
          throw new UnsupportedOperationException("InstanceDataManager." + method.getName()
              + " called: only the single-stage query path is served here");
      }
    };
    return (InstanceDataManager) Proxy.newProxyInstance(PinotServer.class.getClassLoader(),
        new Class<?>[]{InstanceDataManager.class}, handler);
  }
}
