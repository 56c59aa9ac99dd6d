package workbench.cluster;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
import org.apache.pinot.common.metadata.ZKMetadataProvider;
import org.apache.pinot.common.metrics.ServerMetrics;
import org.apache.pinot.common.utils.config.TagNameUtils;
import org.apache.pinot.common.utils.fetcher.SegmentFetcherFactory;
import org.apache.pinot.common.utils.helix.HelixHelper;
import org.apache.pinot.core.data.manager.InstanceDataManager;
import org.apache.pinot.core.data.manager.provider.DefaultTableDataManagerProvider;
import org.apache.pinot.core.data.manager.realtime.RealtimeConsumptionRateManager;
import org.apache.pinot.core.data.manager.realtime.SegmentBuildTimeLeaseExtender;
import org.apache.pinot.segment.local.data.manager.TableDataManager;
import org.apache.pinot.segment.local.utils.SegmentLocks;
import org.apache.pinot.segment.local.utils.SegmentReloadSemaphore;
import org.apache.pinot.segment.local.utils.ServerReloadJobStatusCache;
import org.apache.pinot.server.realtime.ControllerLeaderLocator;
import org.apache.pinot.server.realtime.ServerSegmentCompletionProtocolHandler;
import org.apache.pinot.spi.config.table.TableConfig;
import org.apache.pinot.spi.data.Schema;
import org.apache.pinot.spi.env.PinotConfiguration;
import org.apache.pinot.spi.utils.CommonConstants;


/**
 * A Pinot server joined to Helix as a real participant, serving Pinot's single-stage query path (as
 * {@link PinotServer}: Netty QueryServer, InstanceRequestHandler, the scheduler QuerySchedulerFactory makes,
 * ServerQueryExecutorV1Impl, and pinot-core's table data managers: OfflineTableDataManager, RealtimeTableDataManager).
 *
 * <p>As pinot-server's BaseServerStarter at 1.5.1 (not on Maven Central as served here): a PARTICIPANT
 * HelixManager named {@code Server_HOST_PORT}; the controller leader locator, the segment completion protocol's
 * client and the segment build lease extender set up; a {@code SegmentOnlineOfflineStateModel} factory registered
 * before connecting; after connecting, the instance config's host and Netty port
 * ({@code HelixHelper.updateHostnamePort}) and the default tags ({@code DefaultTenant_OFFLINE}/{@code _REALTIME} under
 * tenant isolation, else {@code server_untagged}). As its HelixInstanceDataManager: a table's data manager is made at
 * the table's first transition from the table config and schema in ZooKeeper, and each transition is the table data
 * manager's own call (see {@link SegmentStateModelFactory}). So a REALTIME table runs as in Pinot: its CONSUMING
 * segments consume from the stream (RealtimeSegmentDataManager), and at the flush threshold the server takes part in
 * the segment completion protocol with the controller (segmentConsumed, segmentCommitStart, the segment's upload,
 * segmentCommitEnd), builds the completed segment and serves it ONLINE.
 *
 * <p>What is not Pinot's: the InstanceDataManager the query executor sees is a small stand-in (a {@link Proxy}
 * answering getInstanceId, getTableDataManager and getAllTables; any other call throws), and
 * {@code shutdownInProgress} is set false at once (Pinot's server waits for its start-up status checks; this one has
 * nothing to catch up on). The Kafka consumer REALTIME tables name is the workbench's ({@code workbench.stream}).
 *
 * <p>Usage: {@code HelixServerMain ZK CLUSTER HOST PORT DATA_DIR [KEY=VALUE...]} (keys: Pinot server config); prints
 * {@code READY HOST:PORT instance=Server_HOST_PORT} once joined, then per transition {@code LOADED TABLE SEGMENT}
 * (OFFLINE->ONLINE), {@code CONSUMING TABLE SEGMENT} and {@code COMMITTED TABLE SEGMENT} (CONSUMING->ONLINE); SIGTERM
 * leaves Helix and stops the Netty server.
 */
public final class HelixServerMain {
  private HelixServerMain() {
  }

  public static void main(String[] args) {
    JvmMain.main(() -> {
      if (args.length < 5) {
        throw new IllegalArgumentException("usage: HelixServerMain ZK CLUSTER HOST PORT DATA_DIR [KEY=VALUE...]");
      }
      run(args);
    });
  }

  private static void run(String[] args)
      throws Exception {
    String host = args[2];
    int port = Integer.parseInt(args[3]);
    PinotConfiguration serverConf = new PinotConfiguration(JvmMain.keyValues(args, 5));
    String instanceId = CommonConstants.Helix.PREFIX_OF_SERVER_INSTANCE + host + "_" + port;

    HelixManager helix = HelixManagerFactory.getZKHelixManager(args[1], instanceId, InstanceType.PARTICIPANT, args[0]);
    SegmentFetcherFactory.init(serverConf.subset(CommonConstants.Server.PREFIX_OF_CONFIG_OF_SEGMENT_FETCHER_FACTORY));
    // What BaseServerStarter.start sets up for REALTIME tables before the state model is registered: the controller
    // leader lookup and the segment completion protocol's client (commit and upload of a completed segment), the
    // lease extender's executor for segment builds, and the server-wide consumption rate limiter (none unless set).
    ControllerLeaderLocator.create(helix);
    ServerSegmentCompletionProtocolHandler.init(
        serverConf.subset(CommonConstants.Server.SegmentCompletionProtocol.PREFIX_OF_CONFIG_OF_SEGMENT_UPLOADER));
    SegmentBuildTimeLeaseExtender.initExecutor();
    RealtimeConsumptionRateManager.getInstance().createServerRateLimiter(serverConf, ServerMetrics.get());
    Tables tables = new Tables(helix, new StandaloneInstanceDataManagerConfig(serverConf, instanceId, args[4]));
    InstanceDataManager instanceDataManager =
        ServerQueryPath.instanceDataManager(instanceId, tables::get, () -> Set.copyOf(tables.names()));
    ServerQueryPath queryPath = ServerQueryPath.start(serverConf, instanceId, port, instanceDataManager);

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

    JvmMain.serve("READY " + host + ":" + port + " instance=" + instanceId, "workbench-server-stop", () -> {
      helix.disconnect();
      queryPath.stop();
      tables.shutDown();
      SegmentBuildTimeLeaseExtender.shutdownExecutor();
    });
  }

  /**
   * The server's table data managers, each made at its table's first transition as HelixInstanceDataManager does:
   * by pinot-core's {@code DefaultTableDataManagerProvider} (OfflineTableDataManager, DimensionTableDataManager or
   * RealtimeTableDataManager by the table config in ZooKeeper), initialised and started.
   */
  static final class Tables {
    private final HelixManager _helix;
    private final String _instanceId;
    private final DefaultTableDataManagerProvider _provider = new DefaultTableDataManagerProvider();
    private final ExecutorService _reloadExecutor = Executors.newSingleThreadExecutor();
    private final Map<String, TableDataManager> _tables = new ConcurrentHashMap<>();

    Tables(HelixManager helix, StandaloneInstanceDataManagerConfig config) {
      _helix = helix;
      _instanceId = config.getInstanceId();
      _provider.init(config, helix, SegmentLocks.create(), null, new ServerReloadJobStatusCache(_instanceId));
    }

    TableDataManager get(String tableNameWithType) {
      return _tables.get(tableNameWithType);
    }

    Set<String> names() {
      return _tables.keySet();
    }

    TableDataManager getOrCreate(String tableNameWithType) {
      return _tables.computeIfAbsent(tableNameWithType, name -> {
        TableConfig tableConfig = ZKMetadataProvider.getTableConfig(_helix.getHelixPropertyStore(), name);
        Schema schema = ZKMetadataProvider.getTableSchema(_helix.getHelixPropertyStore(), name);
        if (tableConfig == null || schema == null) {
          throw new IllegalStateException(name + ": no table config or schema in ZooKeeper");
        }
        // The server serves queries from its start (no start-up status checks here), so it is always "ready".
        TableDataManager manager = _provider.getTableDataManager(tableConfig, schema, new SegmentReloadSemaphore(1),
            _reloadExecutor, null, null, () -> true, false, new ServerReloadJobStatusCache(_instanceId));
        manager.start();
        return manager;
      });
    }

    void shutDown() {
      _tables.values().forEach(TableDataManager::shutDown);
      _reloadExecutor.shutdownNow();
    }
  }

  /**
   * Pinot's state model name and states, each transition what pinot-server's SegmentOnlineOfflineStateModelFactory
   * does at 1.5.1 through HelixInstanceDataManager: OFFLINE->ONLINE and CONSUMING->ONLINE are the table data manager's
   * {@code addOnlineSegment} (for a consuming segment: build or download the committed one and replace it),
   * OFFLINE->CONSUMING its {@code addConsumingSegment} (start consuming from the stream), and leaving ONLINE or
   * CONSUMING offloads the segment. Segment files are left on disk when DROPPED (the JVM's work directory goes).
   */
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
        log("LOADED", message);
      }

      @Transition(from = "OFFLINE", to = "CONSUMING")
      public void onBecomeConsumingFromOffline(Message message, NotificationContext context)
          throws Exception {
        _tables.getOrCreate(message.getResourceName()).addConsumingSegment(message.getPartitionName());
        log("CONSUMING", message);
      }

      @Transition(from = "CONSUMING", to = "ONLINE")
      public void onBecomeOnlineFromConsuming(Message message, NotificationContext context)
          throws Exception {
        _tables.getOrCreate(message.getResourceName()).addOnlineSegment(message.getPartitionName());
        log("COMMITTED", message);
      }

      @Transition(from = "CONSUMING", to = "OFFLINE")
      public void onBecomeOfflineFromConsuming(Message message, NotificationContext context)
          throws Exception {
        TableDataManager manager = offload(message);
        if (manager != null) {
          manager.onConsumingToOffline(message.getPartitionName());
        }
      }

      @Transition(from = "CONSUMING", to = "DROPPED")
      public void onBecomeDroppedFromConsuming(Message message, NotificationContext context)
          throws Exception {
        TableDataManager manager = offload(message);
        if (manager != null) {
          manager.onConsumingToDropped(message.getPartitionName());
        }
      }

      @Transition(from = "ONLINE", to = "OFFLINE")
      public void onBecomeOfflineFromOnline(Message message, NotificationContext context)
          throws Exception {
        offload(message);
      }

      @Transition(from = "ONLINE", to = "DROPPED")
      public void onBecomeDroppedFromOnline(Message message, NotificationContext context)
          throws Exception {
        offload(message);
      }

      @Transition(from = "OFFLINE", to = "DROPPED")
      public void onBecomeDroppedFromOffline(Message message, NotificationContext context) {
      }

      @Transition(from = "ERROR", to = "OFFLINE")
      public void onBecomeOfflineFromError(Message message, NotificationContext context) {
      }

      @Transition(from = "ERROR", to = "DROPPED")
      public void onBecomeDroppedFromError(Message message, NotificationContext context) {
      }

      private TableDataManager offload(Message message)
          throws Exception {
        TableDataManager manager = _tables.get(message.getResourceName());
        if (manager != null) {
          manager.offloadSegment(message.getPartitionName());
        }
        return manager;
      }

      private void log(String what, Message message) {
        System.out.println(what + " " + message.getResourceName() + " " + message.getPartitionName());
        System.out.flush();
      }
    }
  }
}
