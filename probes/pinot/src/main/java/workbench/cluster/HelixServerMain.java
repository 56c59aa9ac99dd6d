package workbench.cluster;

import java.io.File;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAccumulator;
import org.apache.helix.HelixManager;
import org.apache.helix.HelixManagerFactory;
import org.apache.helix.InstanceType;
import org.apache.helix.NotificationContext;
import org.apache.helix.model.InstanceConfig;
import org.apache.helix.model.Message;
import org.apache.helix.participant.statemachine.StateModel;
import org.apache.helix.participant.statemachine.StateModelFactory;
import org.apache.helix.participant.statemachine.StateModelInfo;
import org.apache.helix.participant.statemachine.Transition;
import org.apache.pinot.common.function.FunctionRegistry;
import org.apache.pinot.common.metadata.ZKMetadataProvider;
import org.apache.pinot.common.metrics.ServerMetrics;
import org.apache.pinot.common.utils.config.TagNameUtils;
import org.apache.pinot.common.utils.helix.HelixHelper;
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
import org.apache.pinot.server.access.AllowAllAccessFactory;
import org.apache.pinot.spi.accounting.ThreadAccountant;
import org.apache.pinot.spi.accounting.ThreadAccountantUtils;
import org.apache.pinot.spi.config.table.TableConfig;
import org.apache.pinot.spi.data.Schema;
import org.apache.pinot.spi.env.PinotConfiguration;
import org.apache.pinot.spi.utils.CommonConstants;
import org.apache.pinot.spi.utils.JsonUtils;


/**
 * A Pinot server's single-stage query path (as workbench.cluster.PinotServer) joined to Helix as a real participant:
 * the instance config as BaseServerStarter at 1.5.1 writes it (host and Netty port, DefaultTenant tags), and a
 * {@code SegmentOnlineOfflineStateModel} factory whose OFFLINE->ONLINE transition loads the segment from
 * SEGMENTS_DIR/&lt;segment&gt; into the table's OfflineTableDataManager.
 *
 * <p>What is not Pinot's: pinot-server's HelixInstanceDataManager (not on Maven Central as served here): the table's
 * config and schema come from files rather than ZooKeeper, the segment from SEGMENTS_DIR rather than a download from
 * the controller, and the query executor sees the one table through the same small InstanceDataManager stand-in as
 * PinotServer. Helix itself (participant, instance config, state transitions, external view) is real.
 *
 * <p>Usage: {@code HelixServerMain ZK CLUSTER TABLE_CONFIG.json SCHEMA.json SEGMENTS_DIR HOST PORT}; prints
 * {@code READY HOST:PORT instance=Server_HOST_PORT} once joined, {@code LOADED SEGMENT} per segment brought ONLINE.
 */
public final class HelixServerMain {
  private HelixServerMain() {
  }

  public static void main(String[] args) {
    try {
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
    String zk = args[0];
    String cluster = args[1];
    TableConfig tableConfig = JsonUtils.fileToObject(new File(args[2]), TableConfig.class);
    Schema schema = Schema.fromFile(new File(args[3]));
    File segmentsDir = new File(args[4]);
    String host = args[5];
    int port = Integer.parseInt(args[6]);
    PinotConfiguration serverConf = new PinotConfiguration(new HashMap<String, Object>());
    String instanceId = CommonConstants.Helix.PREFIX_OF_SERVER_INSTANCE + host + "_" + port;
    String tableNameWithType = tableConfig.getTableName();
    ServerMetrics serverMetrics = ServerMetrics.get();
    ThreadAccountant accountant = ThreadAccountantUtils.getNoOpAccountant();

    HelixManager helix = HelixManagerFactory.getZKHelixManager(cluster, instanceId, InstanceType.PARTICIPANT, zk);
    File dataDir = new File(segmentsDir.getParentFile(), "server-" + host + "-" + port);
    StandaloneInstanceDataManagerConfig instanceConfig =
        new StandaloneInstanceDataManagerConfig(serverConf, instanceId, dataDir.getPath());
    ExecutorService reloadExecutor = Executors.newSingleThreadExecutor();
    OfflineTableDataManager tableDataManager = new OfflineTableDataManager();
    // As pinot-server (its data manager starts in a pre-connect callback): the table data manager reads the property
    // store in init, so it starts once ZooKeeper is connected and before any state transition arrives.
    helix.addPreConnectCallback(() -> {
      tableDataManager.init(instanceConfig, helix, SegmentLocks.create(), tableConfig, schema,
          new SegmentReloadSemaphore(1), reloadExecutor, null, null, null, false,
          new ServerReloadJobStatusCache(instanceId));
      tableDataManager.start();
    });
    IndexLoadingConfig indexLoadingConfig = new IndexLoadingConfig(tableConfig, schema);
    InstanceDataManager instanceDataManager = instanceDataManager(instanceId, tableNameWithType, tableDataManager);

    ServerQueryLogger.init(CommonConstants.Server.DEFAULT_QUERY_LOG_MAX_RATE,
        CommonConstants.Server.DEFAULT_QUERY_LOG_DROPPED_REPORT_MAX_RATE, serverMetrics);
    FunctionRegistry.init();
    TransformFunctionFactory.init(Set.of());
    QueryExecutor queryExecutor = new ServerQueryExecutorV1Impl();
    queryExecutor.init(serverConf.subset(CommonConstants.Server.QUERY_EXECUTOR_CONFIG_PREFIX), instanceDataManager,
        serverMetrics);
    QueryScheduler scheduler = QuerySchedulerFactory.create(
        serverConf.subset(CommonConstants.PINOT_QUERY_SCHEDULER_PREFIX), instanceId, queryExecutor, accountant,
        new LongAccumulator(Long::max, 0));
    InstanceRequestHandler handler = new InstanceRequestHandler(instanceId, serverConf, scheduler,
        new AllowAllAccessFactory().create(), accountant);
    QueryServer queryServer = new QueryServer(port, null, handler);
    queryExecutor.start();
    scheduler.start();
    queryServer.start();

    // As BaseServerStarter: state model factory, connect, then the instance config (host, Netty port, tags).
    helix.getStateMachineEngine().registerStateModelFactory("SegmentOnlineOfflineStateModel",
        new SegmentStateModelFactory(tableNameWithType, tableDataManager, segmentsDir, indexLoadingConfig));
    helix.connect();
    InstanceConfig config = HelixHelper.getInstanceConfig(helix, instanceId);
    HelixHelper.updateHostnamePort(config, host, port);
    HelixHelper.addDefaultTags(config,
        () -> ZKMetadataProvider.getClusterTenantIsolationEnabled(helix.getHelixPropertyStore())
            ? List.of(TagNameUtils.getOfflineTagForTenant(null), TagNameUtils.getRealtimeTagForTenant(null))
            : List.of(CommonConstants.Helix.UNTAGGED_SERVER_INSTANCE));
    // Pinot's server sets shutdownInProgress=true here and false once its start-up checks pass (the broker routes to
    // no server while it is true); this server has nothing to catch up on, so it is ready now.
    config.getRecord().setSimpleField(CommonConstants.Helix.IS_SHUTDOWN_IN_PROGRESS, "false");
    HelixHelper.updateInstanceConfig(helix, config);

    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      helix.disconnect();
      queryServer.shutDown();
      scheduler.stop();
      queryExecutor.shutDown();
      tableDataManager.shutDown();
      reloadExecutor.shutdownNow();
      stopped.countDown();
    }, "workbench-server-stop"));
    System.out.println("READY " + host + ":" + port + " instance=" + instanceId);
    System.out.flush();
    stopped.await();
  }

  /** Pinot's state model name and states; OFFLINE->ONLINE loads the segment from the given directory. */
  public static final class SegmentStateModelFactory extends StateModelFactory<StateModel> {
    private final String _table;
    private final OfflineTableDataManager _manager;
    private final File _dir;
    private final IndexLoadingConfig _loading;

    SegmentStateModelFactory(String table, OfflineTableDataManager manager, File dir, IndexLoadingConfig loading) {
      _table = table;
      _manager = manager;
      _dir = dir;
      _loading = loading;
    }

    @Override
    public StateModel createNewStateModel(String resourceName, String partitionName) {
      return new SegmentStateModel();
    }

    @StateModelInfo(states = "{'OFFLINE','ONLINE', 'CONSUMING', 'DROPPED'}", initialState = "OFFLINE")
    public final class SegmentStateModel extends StateModel {
      @Transition(from = "OFFLINE", to = "ONLINE")
      public void onBecomeOnlineFromOffline(Message message, NotificationContext context)
          throws Exception {
        if (!_table.equals(message.getResourceName())) {
          throw new IllegalStateException("this server serves " + _table + ", not " + message.getResourceName());
        }
        String segment = message.getPartitionName();
        _manager.addSegment(ImmutableSegmentLoader.load(new File(_dir, segment), _loading), null);
        System.out.println("LOADED " + segment);
        System.out.flush();
      }

      @Transition(from = "ONLINE", to = "OFFLINE")
      public void onBecomeOfflineFromOnline(Message message, NotificationContext context) {
        _manager.offloadSegment(message.getPartitionName());
      }

      @Transition(from = "OFFLINE", to = "DROPPED")
      public void onBecomeDroppedFromOffline(Message message, NotificationContext context) {
      }

      @Transition(from = "ERROR", to = "OFFLINE")
      public void onBecomeOfflineFromError(Message message, NotificationContext context) {
      }
    }
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
          throw new UnsupportedOperationException("InstanceDataManager." + method.getName());
      }
    };
    return (InstanceDataManager) Proxy.newProxyInstance(HelixServerMain.class.getClassLoader(),
        new Class<?>[]{InstanceDataManager.class}, handler);
  }
}
