package workbench.cluster;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
import org.apache.pinot.common.utils.fetcher.SegmentFetcherFactory;
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
import org.apache.pinot.segment.local.utils.SegmentLocks;
import org.apache.pinot.segment.local.utils.SegmentReloadSemaphore;
import org.apache.pinot.segment.local.utils.ServerReloadJobStatusCache;
import org.apache.pinot.server.access.AllowAllAccessFactory;
import org.apache.pinot.spi.accounting.ThreadAccountant;
import org.apache.pinot.spi.accounting.ThreadAccountantUtils;
import org.apache.pinot.spi.accounting.ThreadResourceUsageProvider;
import org.apache.pinot.spi.config.table.TableConfig;
import org.apache.pinot.spi.config.table.TableType;
import org.apache.pinot.spi.data.Schema;
import org.apache.pinot.spi.env.PinotConfiguration;
import org.apache.pinot.spi.utils.CommonConstants;
import org.apache.pinot.spi.utils.builder.TableNameBuilder;


/**
 * A Pinot server joined to Helix as a real participant, serving Pinot's single-stage query path (as
 * {@link PinotServer}: Netty QueryServer, InstanceRequestHandler, the scheduler QuerySchedulerFactory makes,
 * ServerQueryExecutorV1Impl, OfflineTableDataManager).
 *
 * <p>As pinot-server's BaseServerStarter at 1.5.1 (not on Maven Central as served here): a PARTICIPANT
 * HelixManager named {@code Server_HOST_PORT}; a {@code SegmentOnlineOfflineStateModel} factory registered before
 * connecting; after connecting, the instance config's host and Netty port ({@code HelixHelper.updateHostnamePort}) and
 * the default tags ({@code DefaultTenant_OFFLINE}/{@code _REALTIME} under tenant isolation, else
 * {@code server_untagged}). As its HelixInstanceDataManager: a table's data manager is made at the table's first
 * transition from the table config and schema in ZooKeeper, and OFFLINE->ONLINE is the table data manager's own
 * {@code addOnlineSegment} (ZK metadata, download from the controller's URL, untar, load).
 *
 * <p>What is not Pinot's: the InstanceDataManager the query executor sees is a small stand-in (a {@link Proxy}
 * answering getInstanceId, getTableDataManager and getAllTables; any other call throws), OFFLINE tables only, and
 * {@code shutdownInProgress} is set false at once (Pinot's server waits for its start-up status checks; this one has
 * nothing to catch up on).
 *
 * <p>Usage: {@code HelixServerMain ZK CLUSTER HOST PORT DATA_DIR [KEY=VALUE...]} (keys: Pinot server config); prints
 * {@code READY HOST:PORT instance=Server_HOST_PORT} once joined and {@code LOADED TABLE SEGMENT} per segment brought
 * ONLINE; SIGTERM leaves Helix and stops the Netty server.
 */
public final class HelixServerMain {
  private HelixServerMain() {
  }

  public static void main(String[] args) {
    try {
      if (args.length < 5) {
        throw new IllegalArgumentException("usage: HelixServerMain ZK CLUSTER HOST PORT DATA_DIR [KEY=VALUE...]");
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
    String host = args[2];
    int port = Integer.parseInt(args[3]);
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
    ServerMetrics serverMetrics = ServerMetrics.get();
    ThreadAccountant accountant = ThreadAccountantUtils.getNoOpAccountant();

    HelixManager helix = HelixManagerFactory.getZKHelixManager(args[1], instanceId, InstanceType.PARTICIPANT, args[0]);
    SegmentFetcherFactory.init(serverConf.subset(CommonConstants.Server.PREFIX_OF_CONFIG_OF_SEGMENT_FETCHER_FACTORY));
    Tables tables = new Tables(helix, new StandaloneInstanceDataManagerConfig(serverConf, instanceId, args[4]));
    InstanceDataManager instanceDataManager = instanceDataManager(instanceId, tables);

    // As BaseServerStarter: per-thread CPU time in each response's metadata only when the server config turns it on.
    ThreadResourceUsageProvider.setThreadCpuTimeMeasurementEnabled(serverConf.getProperty(
        CommonConstants.Server.CONFIG_OF_ENABLE_THREAD_CPU_TIME_MEASUREMENT,
        CommonConstants.Server.DEFAULT_ENABLE_THREAD_CPU_TIME_MEASUREMENT));
    ServerQueryLogger.init(
        serverConf.getProperty(CommonConstants.Server.CONFIG_OF_QUERY_LOG_MAX_RATE,
            CommonConstants.Server.DEFAULT_QUERY_LOG_MAX_RATE),
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

    helix.getStateMachineEngine().registerStateModelFactory("SegmentOnlineOfflineStateModel",
        new SegmentStateModelFactory(tables));
    helix.connect();
    InstanceConfig config = HelixHelper.getInstanceConfig(helix, instanceId);
    HelixHelper.updateHostnamePort(config, host, port);
    HelixHelper.addDefaultTags(config,
        () -> ZKMetadataProvider.getClusterTenantIsolationEnabled(helix.getHelixPropertyStore())
            ? List.of(TagNameUtils.getOfflineTagForTenant(null), TagNameUtils.getRealtimeTagForTenant(null))
            : List.of(CommonConstants.Helix.UNTAGGED_SERVER_INSTANCE));
    config.getRecord().setSimpleField(CommonConstants.Helix.IS_SHUTDOWN_IN_PROGRESS, "false");
    HelixHelper.updateInstanceConfig(helix, config);

    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      helix.disconnect();
      queryServer.shutDown();
      scheduler.stop();
      queryExecutor.shutDown();
      tables.shutDown();
      stopped.countDown();
    }, "workbench-server-stop"));
    System.out.println("READY " + host + ":" + port + " instance=" + instanceId);
    System.out.flush();
    stopped.await();
  }

  /** The server's table data managers, each made at its table's first transition as HelixInstanceDataManager does. */
  static final class Tables {
    private final HelixManager _helix;
    private final StandaloneInstanceDataManagerConfig _config;
    private final ExecutorService _reloadExecutor = Executors.newSingleThreadExecutor();
    private final Map<String, OfflineTableDataManager> _tables = new ConcurrentHashMap<>();

    Tables(HelixManager helix, StandaloneInstanceDataManagerConfig config) {
      _helix = helix;
      _config = config;
    }

    OfflineTableDataManager get(String tableNameWithType) {
      return _tables.get(tableNameWithType);
    }

    Set<String> names() {
      return _tables.keySet();
    }

    OfflineTableDataManager getOrCreate(String tableNameWithType) {
      if (TableNameBuilder.getTableTypeFromTableName(tableNameWithType) != TableType.OFFLINE) {
        throw new UnsupportedOperationException(tableNameWithType + ": this server serves OFFLINE tables only");
      }
      return _tables.computeIfAbsent(tableNameWithType, name -> {
        TableConfig tableConfig = ZKMetadataProvider.getTableConfig(_helix.getHelixPropertyStore(), name);
        Schema schema = ZKMetadataProvider.getTableSchema(_helix.getHelixPropertyStore(), name);
        if (tableConfig == null || schema == null) {
          throw new IllegalStateException(name + ": no table config or schema in ZooKeeper");
        }
        OfflineTableDataManager manager = new OfflineTableDataManager();
        manager.init(_config, _helix, SegmentLocks.create(), tableConfig, schema, new SegmentReloadSemaphore(1),
            _reloadExecutor, null, null, null, false, new ServerReloadJobStatusCache(_config.getInstanceId()));
        manager.start();
        return manager;
      });
    }

    void shutDown() {
      _tables.values().forEach(OfflineTableDataManager::shutDown);
      _reloadExecutor.shutdownNow();
    }
  }

  /** Pinot's state model name and states; OFFLINE->ONLINE is the table data manager's own addOnlineSegment. */
  public static final class SegmentStateModelFactory extends StateModelFactory<StateModel> {
    private final Tables _tables;

    SegmentStateModelFactory(Tables tables) {
      _tables = tables;
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
        _tables.getOrCreate(message.getResourceName()).addOnlineSegment(message.getPartitionName());
        System.out.println("LOADED " + message.getResourceName() + " " + message.getPartitionName());
        System.out.flush();
      }

      @Transition(from = "ONLINE", to = "OFFLINE")
      public void onBecomeOfflineFromOnline(Message message, NotificationContext context) {
        OfflineTableDataManager manager = _tables.get(message.getResourceName());
        if (manager != null) {
          manager.offloadSegment(message.getPartitionName());
        }
      }

      @Transition(from = "OFFLINE", to = "DROPPED")
      public void onBecomeDroppedFromOffline(Message message, NotificationContext context) {
      }

      @Transition(from = "ERROR", to = "OFFLINE")
      public void onBecomeOfflineFromError(Message message, NotificationContext context) {
      }
    }
  }

  private static InstanceDataManager instanceDataManager(String instanceId, Tables tables) {
    InvocationHandler handler = (proxy, method, methodArgs) -> {
      switch (method.getName()) {
        case "getInstanceId":
          return instanceId;
        case "getTableDataManager":
          return tables.get((String) methodArgs[0]);
        case "getAllTables":
          return Set.copyOf(tables.names());
        case "toString":
          return "InstanceDataManager(" + instanceId + ")";
        case "hashCode":
          return System.identityHashCode(proxy);
        case "equals":
          return proxy == methodArgs[0];
        default:
          throw new UnsupportedOperationException("InstanceDataManager." + method.getName()
              + " called: only the single-stage query path is served here");
      }
    };
    return (InstanceDataManager) Proxy.newProxyInstance(HelixServerMain.class.getClassLoader(),
        new Class<?>[]{InstanceDataManager.class}, handler);
  }
}
