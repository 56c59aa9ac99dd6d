package workbench.groundtruth;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.helix.model.ExternalView;
import org.apache.helix.model.IdealState;
import org.apache.helix.model.InstanceConfig;
import org.apache.helix.store.zk.ZkHelixPropertyStore;
import org.apache.helix.zookeeper.datamodel.ZNRecord;
import org.apache.helix.zookeeper.datamodel.serializer.ZNRecordSerializer;
import javax.annotation.Nullable;
import org.apache.pinot.broker.querylog.QueryLogger;
import org.apache.pinot.broker.requesthandler.BaseSingleStageBrokerRequestHandler;
import org.apache.pinot.broker.routing.adaptiveserverselector.AdaptiveServerSelector;
import org.apache.pinot.broker.routing.instanceselector.InstanceSelector;
import org.apache.pinot.broker.routing.instanceselector.InstanceSelectorFactory;
import org.apache.pinot.broker.routing.segmentpruner.SegmentPruner;
import org.apache.pinot.broker.routing.segmentpruner.SegmentPrunerFactory;
import org.apache.pinot.common.metadata.ZKMetadataProvider;
import org.apache.pinot.common.metadata.segment.SegmentZKMetadata;
import org.apache.pinot.common.metadata.segment.SegmentZKMetadataUtils;
import org.apache.pinot.common.metrics.BrokerMetrics;
import org.apache.pinot.common.request.BrokerRequest;
import org.apache.pinot.common.response.broker.BrokerResponseNative;
import org.apache.pinot.common.utils.HashUtil;
import org.apache.pinot.common.utils.ZkStarter;
import org.apache.pinot.common.utils.config.TagNameUtils;
import org.apache.pinot.core.transport.ServerInstance;
import org.apache.pinot.segment.spi.SegmentMetadata;
import org.apache.pinot.spi.config.table.TableConfig;
import org.apache.pinot.spi.data.Schema;
import org.apache.pinot.spi.env.PinotConfiguration;
import org.apache.pinot.spi.trace.DefaultRequestContext;
import org.apache.pinot.spi.utils.builder.TableNameBuilder;


/**
 * The broker's routing for one table, as Pinot's broker builds it: the one place the driver ({@link PinotParts}) and
 * the cluster's load generator ({@code workbench.cluster.LoadGenerator}) get pruners and instance selectors from.
 *
 * <p>Each segment's ZooKeeper metadata is made by the controller's {@code SegmentZKMetadataUtils} and stored in a
 * real in-process ZooKeeper ({@link ZkStarter}) with the schema; the pruners come from
 * {@link SegmentPrunerFactory#getSegmentPruners} on the table config and are initialised from the stored records;
 * the instance selector from {@link InstanceSelectorFactory#getInstanceSelector} on the ideal state (also the
 * external view: every replica ONLINE). {@link #route} then does what {@code BaseBrokerRoutingManager.calculateRouting}
 * does for an optimised request: the online segments' set, each pruner in order, then {@code select(request,
 * segments, requestId)}. One instance is used by one thread at a time per call of {@link #route}: the pruners and
 * selectors are the broker's, which are thread-safe after {@code init}.
 */
public final class BrokerRouting implements AutoCloseable {
  private final TableConfig _tableConfig;
  private final ZkStarter.ZookeeperInstance _zk;
  private final ZkHelixPropertyStore<ZNRecord> _propertyStore;
  private final IdealState _idealState;
  private final List<SegmentPruner> _pruners;
  private final InstanceSelector _selector;
  private final Map<String, ServerInstance> _servers;
  private final Map<String, Map<String, String>> _zkMetadata = new TreeMap<>();

  /** What the routing manager decided for one request. */
  public static final class Route {
    public final int numSegmentsPrunedByBroker;
    public final Set<String> segmentsAfterPruning;
    public final Map<String, String> segmentToServer;
    public final List<String> unavailableSegments;

    Route(int pruned, Set<String> selected, Map<String, String> segmentToServer, List<String> unavailable) {
      numSegmentsPrunedByBroker = pruned;
      segmentsAfterPruning = selected;
      this.segmentToServer = segmentToServer;
      unavailableSegments = unavailable;
    }

    /**
     * The {@code numSegmentsPrunedByBroker} the broker's response carries: the pruned count, except when no segment
     * is left to query. Then {@code BaseSingleStageBrokerRequestHandler} answers with its empty response
     * ({@code getEmptyBrokerOnlyResponse}) before it sets the count (1.5.1), so Pinot reports 0.
     */
    public int reportedPruned() {
      return segmentToServer.isEmpty() ? 0 : numSegmentsPrunedByBroker;
    }
  }

  /**
   * Start ZooKeeper in {@code zkDir} on {@code zkPort}, store the schema and each segment's ZK metadata (segment
   * name to its metadata and size in bytes, in the order given), and build the pruners and instance selector on
   * {@code idealState} (segment to {instance: state}) over {@code serverNames} ({@code Server_host_port}).
   */
  public BrokerRouting(TableConfig tableConfig, Schema schema, Map<String, SegmentMetadata> segments,
      Map<String, Long> sizeBytes, JsonNode idealState, List<String> serverNames, PinotConfiguration brokerConfig,
      File zkDir, int zkPort)
      throws Exception {
    this(tableConfig, schema, segments, sizeBytes, idealState, serverNames, brokerConfig, zkDir, zkPort, null);
  }

  /**
   * As above, the instance selector ranking replicas with {@code adaptiveServerSelector} (what
   * {@code AdaptiveServerSelectorFactory} makes of the broker config's
   * {@code pinot.broker.adaptive.server.selector.*} keys; {@code null}: none, Pinot's default).
   */
  public BrokerRouting(TableConfig tableConfig, Schema schema, Map<String, SegmentMetadata> segments,
      Map<String, Long> sizeBytes, JsonNode idealState, List<String> serverNames, PinotConfiguration brokerConfig,
      File zkDir, int zkPort, @Nullable AdaptiveServerSelector adaptiveServerSelector)
      throws Exception {
    _tableConfig = tableConfig;
    String tableNameWithType = tableConfig.getTableName();
    _zk = ZkStarter.startLocalZkServer(zkPort, zkDir.getPath());
    ZkHelixPropertyStore<ZNRecord> store = null;
    try {
      store = new ZkHelixPropertyStore<>(_zk.getZkUrl(), new ZNRecordSerializer(), "/workbench/PROPERTYSTORE");
      ZKMetadataProvider.setSchema(store, schema);
      for (Map.Entry<String, SegmentMetadata> e : segments.entrySet()) {
        SegmentMetadata metadata = e.getValue();
        SegmentZKMetadata zkMetadata = SegmentZKMetadataUtils.createSegmentZKMetadata(tableNameWithType, metadata,
            "file://" + metadata.getIndexDir(), null, sizeBytes.getOrDefault(e.getKey(), -1L));
        ZKMetadataProvider.createSegmentZkMetadata(store, tableNameWithType, zkMetadata);
        _zkMetadata.put(e.getKey(), new LinkedHashMap<>(zkMetadata.toZNRecord().getSimpleFields()));
      }
      _idealState = new IdealState(tableNameWithType);
      _idealState.setRebalanceMode(IdealState.RebalanceMode.CUSTOMIZED);  // as Pinot's table ideal states are
      ExternalView externalView = new ExternalView(tableNameWithType);
      Iterator<Map.Entry<String, JsonNode>> assignment = idealState.fields();
      while (assignment.hasNext()) {
        Map.Entry<String, JsonNode> e = assignment.next();
        Map<String, String> states = new TreeMap<>();
        e.getValue().fields().forEachRemaining(s -> states.put(s.getKey(), s.getValue().asText()));
        _idealState.setInstanceStateMap(e.getKey(), states);
        externalView.setStateMap(e.getKey(), states);
      }
      Set<String> onlineSegments = new HashSet<>(_idealState.getPartitionSet());
      List<String> segmentNames = new ArrayList<>(onlineSegments);
      List<ZNRecord> znRecords = new ArrayList<>();
      for (String name : segmentNames) {
        znRecords.add(ZKMetadataProvider.getSegmentZKMetadata(store, tableNameWithType, name).toZNRecord());
      }
      _pruners = SegmentPrunerFactory.getSegmentPruners(tableConfig, store);
      for (SegmentPruner pruner : _pruners) {
        pruner.init(_idealState, externalView, segmentNames, znRecords);
      }
      _servers = new HashMap<>();
      for (String server : serverNames) {
        InstanceConfig config = InstanceConfig.toInstanceConfig(server);
        config.addTag(TagNameUtils.getOfflineTagForTenant(null));
        _servers.put(server, new ServerInstance(config));
      }
      _selector = InstanceSelectorFactory.getInstanceSelector(tableConfig, store, BrokerMetrics.get(),
          adaptiveServerSelector,
          Clock.systemUTC(), brokerConfig, _servers.keySet(), _servers, _idealState, externalView, onlineSegments);
      _propertyStore = store;
    } catch (Exception | Error e) {
      if (store != null) {
        store.close();
      }
      ZkStarter.stopLocalZkServer(_zk);
      throw e;
    }
  }

  /** The segment set {@code BaseBrokerRoutingManager.getOnlineSegments} builds (sized up front, ideal-state order). */
  private Set<String> onlineSegments() {
    Map<String, Map<String, String>> assignment = _idealState.getRecord().getMapFields();
    Set<String> online = new HashSet<>(HashUtil.getHashMapCapacity(assignment.size()));
    for (Map.Entry<String, Map<String, String>> entry : assignment.entrySet()) {
      if (entry.getValue().containsValue("ONLINE") || entry.getValue().containsValue("CONSUMING")) {
        online.add(entry.getKey());
      }
    }
    return online;
  }

  /** Prune, then select instances, for an optimised request naming the physical table. */
  public Route route(BrokerRequest brokerRequest, long requestId) {
    Set<String> selected = onlineSegments();
    int total = selected.size();
    for (SegmentPruner pruner : _pruners) {
      selected = pruner.prune(brokerRequest, selected);
    }
    Map<String, String> segmentToServer = Map.of();
    List<String> unavailable = List.of();
    if (!selected.isEmpty()) {
      InstanceSelector.SelectionResult selection = _selector.select(brokerRequest, new ArrayList<>(selected),
          requestId);
      segmentToServer = selection.getSegmentToInstanceMap();
      unavailable = selection.getUnavailableSegments();
    }
    return new Route(total - selected.size(), selected, segmentToServer, unavailable);
  }

  public Map<String, ServerInstance> servers() {
    return _servers;
  }

  public List<SegmentPruner> pruners() {
    return _pruners;
  }

  public InstanceSelector selector() {
    return _selector;
  }

  /** Each segment's ZK metadata simple fields as the controller wrote them (segment name order). */
  public Map<String, Map<String, String>> zkMetadata() {
    return _zkMetadata;
  }

  /**
   * One completed query into the broker's query log, with the request context the single-stage handler fills:
   * {@code reduced}'s {@code timeUsedMs} is the log's {@code timeMs}; {@code serverStats} is
   * {@code AsyncQueryResponse.getServerStats()}'s text.
   */
  public static void logCompleted(QueryLogger queryLogger, boolean logged, long requestId, long arrivalMs, String sql,
      String tableName, BrokerResponseNative reduced, int numUnavailableSegments, String serverStats) {
    DefaultRequestContext requestContext = new DefaultRequestContext();
    requestContext.setRequestId(requestId);
    requestContext.setRequestArrivalTimeMillis(arrivalMs);
    requestContext.setQuery(sql);
    requestContext.setTableName(TableNameBuilder.extractRawTableName(tableName));
    requestContext.setNumUnavailableSegments(numUnavailableSegments);
    BaseSingleStageBrokerRequestHandler.ServerStats stats = new BaseSingleStageBrokerRequestHandler.ServerStats();
    stats.setServerStats(serverStats);
    queryLogger.logQueryCompleted(new QueryLogger.QueryLogParams(requestContext, tableName, reduced,
        QueryLogger.QueryLogParams.QueryEngine.SINGLE_STAGE, null, stats), logged);
  }

  public TableConfig tableConfig() {
    return _tableConfig;
  }

  @Override
  public void close() {
    _propertyStore.close();
    ZkStarter.stopLocalZkServer(_zk);
  }
}
