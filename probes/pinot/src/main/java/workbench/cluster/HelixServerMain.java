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
import org.apache.pinot.common.utils.config.TagNameUtils;
import org.apache.pinot.common.utils.fetcher.SegmentFetcherFactory;
import org.apache.pinot.common.utils.helix.HelixHelper;
import org.apache.pinot.core.data.manager.InstanceDataManager;
import org.apache.pinot.core.data.manager.offline.OfflineTableDataManager;
import org.apache.pinot.segment.local.utils.SegmentLocks;
import org.apache.pinot.segment.local.utils.SegmentReloadSemaphore;
import org.apache.pinot.segment.local.utils.ServerReloadJobStatusCache;
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
    });
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
}
