package workbench.groundtruth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.helix.HelixDataAccessor;
import org.apache.helix.HelixManager;
import org.apache.helix.PropertyKey;
import org.apache.helix.model.InstanceConfig;
import org.apache.helix.store.zk.ZkHelixPropertyStore;
import org.apache.helix.zookeeper.datamodel.ZNRecord;
import org.apache.helix.zookeeper.datamodel.serializer.ZNRecordSerializer;
import org.apache.pinot.common.assignment.InstanceAssignmentConfigUtils;
import org.apache.pinot.common.assignment.InstancePartitions;
import org.apache.pinot.common.assignment.InstancePartitionsUtils;
import org.apache.pinot.common.metadata.ZKMetadataProvider;
import org.apache.pinot.common.metadata.segment.SegmentPartitionMetadata;
import org.apache.pinot.common.metadata.segment.SegmentZKMetadata;
import org.apache.pinot.common.utils.ZkStarter;
import org.apache.pinot.segment.local.utils.TableConfigUtils;
import org.apache.pinot.controller.helix.core.assignment.instance.InstanceAssignmentDriver;
import org.apache.pinot.controller.helix.core.assignment.segment.SegmentAssignment;
import org.apache.pinot.controller.helix.core.assignment.segment.SegmentAssignmentFactory;
import org.apache.pinot.controller.helix.core.assignment.segment.SegmentAssignmentUtils;
import org.apache.pinot.controller.helix.core.rebalance.RebalanceConfig;
import org.apache.pinot.segment.spi.partition.metadata.ColumnPartitionMetadata;
import org.apache.pinot.spi.config.table.TableConfig;
import org.apache.pinot.spi.config.table.TableType;
import org.apache.pinot.spi.config.table.assignment.InstancePartitionsType;
import org.apache.pinot.spi.utils.CommonConstants.Helix.StateModel.SegmentStateModel;
import org.apache.pinot.spi.utils.Enablement;
import org.apache.pinot.spi.utils.JsonUtils;


/**
 * Pinot's controller decisions, run in-process on given servers and tables: the ground truth for the workbench's
 * instance assignment, segment assignment and rebalance (workbench.pinot.assignment, workbench.pinot.rebalance).
 *
 * <p>For each OFFLINE table, as Pinot 1.5.1's controller does it:
 * <ol>
 *   <li>instance partitions as table creation makes them: {@code InstanceAssignmentDriver.assignInstances} when the
 *   table allows instance assignment ({@code InstanceAssignmentConfigUtils.allowInstanceAssignment}), else the
 *   default ones a segment upload computes ({@code InstancePartitionsUtils.computeDefaultInstancePartitions});</li>
 *   <li>the ideal state built by uploading the table's segments one by one: the table's {@code SegmentAssignment}
 *   (from {@code SegmentAssignmentFactory}) {@code assignSegment} on the ideal state so far, each result put as
 *   {@code getInstanceStateMap(instances, ONLINE)}, as {@code PinotHelixResourceManager.assignTableSegment} does;</li>
 *   <li>given the servers after a change, the table rebalancer's target (reassignInstances, no bootstrap, the
 *   table's minimizeDataMovement option): instance partitions re-assigned from the existing ones (or the default
 *   ones recomputed), then {@code SegmentAssignment.rebalanceTable} on the current ideal state, as
 *   {@code TableRebalancer.rebalance} computes its target assignment.</li>
 * </ol>
 *
 * <p>Helix stands in as the controller's tests have it: a {@code HelixManager} that answers only what the
 * assignment code asks (the instance configs, the cluster name, the property store). Each segment's partition
 * metadata, which replica-group assignment of a partitioned table reads from ZooKeeper, is stored in a real
 * in-process ZooKeeper ({@link ZkStarter}), started only when a table has a partition column.
 *
 * <p>Usage: {@code java -cp 'lib/*:classes' workbench.groundtruth.ControllerParts REQUEST.json RESPONSE.json}.
 * The request: {@code instances} (each {@code name}, {@code tags}, optional {@code pools}: tag to pool id), optional
 * {@code newInstances} (the servers after the change), {@code tables} (each {@code tableConfig}, the user's JSON;
 * {@code segments} in upload order, each {@code name} and optional {@code partitions}: column to partition ids; optional
 * {@code minimizeDataMovement}: DEFAULT, ENABLE or DISABLE; optional {@code idealState}, the current one, whose segments
 * are not uploaded again; optional {@code instances} and {@code newInstances} of its own), and {@code zkPort},
 * {@code workDir}. The response has, per
 * table, {@code instancePartitions} (type to {@code "partition_group"} to servers), {@code idealState}, and with
 * {@code newInstances} {@code rebalanced} (the same two after the rebalance).
 */
public final class ControllerParts {
  private static final String CLUSTER = "workbench";

  private ControllerParts() {
  }

  public static void main(String[] args) {
    DriverMain.main("ControllerParts", args, ControllerParts::run);
  }

  static ObjectNode run(JsonNode request)
      throws Exception {
    List<TableConfig> tables = new ArrayList<>();
    for (JsonNode table : request.get("tables")) {
      TableConfig config = JsonUtils.jsonNodeToObject(table.get("tableConfig"), TableConfig.class);
      if (config.getTableType() != TableType.OFFLINE) {
        throw new IllegalArgumentException(config.getTableName() + ": only OFFLINE tables are driven here");
      }
      tables.add(config);
    }
    List<InstanceConfig> before = instanceConfigs(request.get("instances"));
    List<InstanceConfig> after = request.hasNonNull("newInstances") ? instanceConfigs(request.get("newInstances")) : null;
    // replica-group assignment over several partitions reads each segment's partition from its ZK metadata
    boolean partitioned = tables.stream().anyMatch(t -> TableConfigUtils.getPartitionColumn(t) != null);
    for (JsonNode table : request.get("tables")) {
      for (JsonNode segment : table.get("segments")) {
        partitioned |= segment.hasNonNull("partitions");
      }
    }

    ObjectNode response = JsonUtils.newObjectNode();
    response.put("pinotVersion", version());
    ArrayNode out = response.putArray("tables");
    ZkStarter.ZookeeperInstance zk = null;
    ZkHelixPropertyStore<ZNRecord> store = null;
    try {
      if (partitioned) {
        File zkDir = new File(request.get("workDir").asText(), "zk");
        zk = ZkStarter.startLocalZkServer(request.get("zkPort").asInt(), zkDir.getPath());
        store = new ZkHelixPropertyStore<>(zk.getZkUrl(), new ZNRecordSerializer(), "/" + CLUSTER + "/PROPERTYSTORE");
      }
      int i = 0;
      for (JsonNode table : request.get("tables")) {
        // a table may name servers of its own (a case of its own in the same JVM)
        List<InstanceConfig> own = table.hasNonNull("instances") ? instanceConfigs(table.get("instances")) : before;
        List<InstanceConfig> ownAfter =
            table.hasNonNull("newInstances") ? instanceConfigs(table.get("newInstances")) : after;
        out.add(runTable(tables.get(i++), table, own, ownAfter, store));
      }
    } finally {
      if (store != null) {
        store.close();
      }
      if (zk != null) {
        ZkStarter.stopLocalZkServer(zk);
      }
    }
    return response;
  }

  private static ObjectNode runTable(TableConfig config, JsonNode table, List<InstanceConfig> before,
      List<InstanceConfig> after, ZkHelixPropertyStore<ZNRecord> store) {
    String tableNameWithType = config.getTableName();
    List<String> segments = new ArrayList<>();
    for (JsonNode segment : table.get("segments")) {
      String name = segment.get("name").asText();
      segments.add(name);
      if (store != null) {
        SegmentZKMetadata metadata = new SegmentZKMetadata(name);
        if (segment.hasNonNull("partitions")) {
          metadata.setPartitionMetadata(partitionMetadata(config, segment.get("partitions")));
        }
        ZKMetadataProvider.setSegmentZKMetadata(store, tableNameWithType, metadata);
      }
    }
    ObjectNode out = JsonUtils.newObjectNode();
    out.put("tableNameWithType", tableNameWithType);

    // Table creation, then one upload after another.
    HelixManager helix = helixManager(before, store);
    Map<InstancePartitionsType, InstancePartitions> partitions = new TreeMap<>();
    InstancePartitionsType type = InstancePartitionsType.OFFLINE;
    if (InstanceAssignmentConfigUtils.allowInstanceAssignment(config, type)) {
      partitions.put(type, new InstanceAssignmentDriver(config).assignInstances(type, before, null));
    } else {
      partitions.put(type, InstancePartitionsUtils.computeDefaultInstancePartitions(helix, config, type));
    }
    SegmentAssignment assignment = SegmentAssignmentFactory.getSegmentAssignment(helix, config, null);
    Map<String, Map<String, String>> idealState = new TreeMap<>();  // a ZNRecord's map fields are sorted
    if (table.hasNonNull("idealState")) {  // the table's current ideal state, given
      table.get("idealState").fields().forEachRemaining(e -> {
        Map<String, String> states = new TreeMap<>();
        e.getValue().fields().forEachRemaining(x -> states.put(x.getKey(), x.getValue().asText()));
        idealState.put(e.getKey(), states);
      });
    }
    for (String segment : segments) {
      if (!idealState.containsKey(segment)) {
        List<String> servers = assignment.assignSegment(segment, idealState, partitions);
        idealState.put(segment, SegmentAssignmentUtils.getInstanceStateMap(servers, SegmentStateModel.ONLINE));
      }
    }
    out.set("instancePartitions", partitionsJson(partitions));
    out.set("idealState", JsonUtils.objectToJsonNode(idealState));

    if (after != null) {
      // TableRebalancer.getInstancePartitions with reassignInstances and no bootstrap, then rebalanceTable.
      Enablement minimize = Enablement.valueOf(table.path("minimizeDataMovement").asText("DEFAULT"));
      HelixManager newHelix = helixManager(after, store);
      Map<InstancePartitionsType, InstancePartitions> newPartitions = new TreeMap<>();
      if (InstanceAssignmentConfigUtils.allowInstanceAssignment(config, type)) {
        newPartitions.put(type,
            new InstanceAssignmentDriver(config).assignInstances(type, after, partitions.get(type), minimize));
      } else {
        newPartitions.put(type, InstancePartitionsUtils.computeDefaultInstancePartitions(newHelix, config, type));
      }
      RebalanceConfig rebalanceConfig = new RebalanceConfig();
      rebalanceConfig.setReassignInstances(true);
      rebalanceConfig.setMinimizeDataMovement(minimize);
      SegmentAssignment rebalancer = SegmentAssignmentFactory.getSegmentAssignment(newHelix, config, null);
      Map<String, Map<String, String>> target =
          rebalancer.rebalanceTable(idealState, newPartitions, null, null, rebalanceConfig);
      ObjectNode rebalanced = out.putObject("rebalanced");
      rebalanced.set("instancePartitions", partitionsJson(newPartitions));
      rebalanced.set("idealState", JsonUtils.objectToJsonNode(new TreeMap<>(target)));
    }
    return out;
  }

  private static SegmentPartitionMetadata partitionMetadata(TableConfig config, JsonNode partitions) {
    Map<String, ColumnPartitionMetadata> columns = new TreeMap<>();
    var partitionConfig = config.getIndexingConfig().getSegmentPartitionConfig();
    partitions.fields().forEachRemaining(e -> {
      Set<Integer> ids = new HashSet<>();
      e.getValue().forEach(p -> ids.add(p.asInt()));
      String function = partitionConfig != null ? partitionConfig.getFunctionName(e.getKey()) : "Murmur";
      int count = partitionConfig != null ? partitionConfig.getNumPartitions(e.getKey()) : ids.size();
      columns.put(e.getKey(), new ColumnPartitionMetadata(function, count, ids, null));
    });
    return new SegmentPartitionMetadata(columns);
  }

  private static List<InstanceConfig> instanceConfigs(JsonNode instances) {
    List<InstanceConfig> configs = new ArrayList<>();
    for (JsonNode spec : instances) {
      InstanceConfig config = new InstanceConfig(spec.get("name").asText());
      spec.get("tags").forEach(t -> config.addTag(t.asText()));
      if (spec.hasNonNull("pools")) {
        Map<String, String> pools = new TreeMap<>();
        spec.get("pools").fields().forEachRemaining(e -> pools.put(e.getKey(), e.getValue().asText()));
        config.getRecord().setMapField("pool", pools);  // InstanceUtils.POOL_KEY
      }
      configs.add(config);
    }
    return configs;
  }

  /** A HelixManager that answers what the assignment code asks, as the controller's tests mock it. */
  private static HelixManager helixManager(List<InstanceConfig> instances, ZkHelixPropertyStore<ZNRecord> store) {
    InvocationHandler accessor = (proxy, method, args) -> switch (method.getName()) {
      case "keyBuilder" -> new PropertyKey.Builder(CLUSTER);
      case "getChildValues" -> new ArrayList<>(instances);
      case "toString" -> "workbench HelixDataAccessor";
      default -> throw new UnsupportedOperationException("HelixDataAccessor." + method.getName());
    };
    HelixDataAccessor dataAccessor = (HelixDataAccessor) Proxy.newProxyInstance(
        ControllerParts.class.getClassLoader(), new Class<?>[]{HelixDataAccessor.class}, accessor);
    InvocationHandler manager = (proxy, method, args) -> switch (method.getName()) {
      case "getHelixDataAccessor" -> dataAccessor;
      case "getClusterName" -> CLUSTER;
      case "getHelixPropertyStore" -> {
        if (store == null) {
          throw new UnsupportedOperationException("no property store: no table has a partition column");
        }
        yield store;
      }
      case "toString" -> "workbench HelixManager";
      case "hashCode" -> System.identityHashCode(proxy);
      case "equals" -> proxy == args[0];
      default -> throw new UnsupportedOperationException("HelixManager." + method.getName());
    };
    return (HelixManager) Proxy.newProxyInstance(ControllerParts.class.getClassLoader(),
        new Class<?>[]{HelixManager.class}, manager);
  }

  private static ObjectNode partitionsJson(Map<InstancePartitionsType, InstancePartitions> partitions) {
    ObjectNode out = JsonUtils.newObjectNode();
    partitions.forEach((type, ip) -> out.set(type.toString(),
        JsonUtils.objectToJsonNode(new TreeMap<>(ip.getPartitionToInstancesMap()))));
    return out;
  }

  static String version() {
    Package pkg = InstanceAssignmentDriver.class.getPackage();
    String version = pkg != null ? pkg.getImplementationVersion() : null;
    return version != null ? version : "unknown";
  }
}
