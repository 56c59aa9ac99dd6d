package workbench.groundtruth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.helix.model.InstanceConfig;
import org.apache.pinot.common.assignment.InstancePartitions;
import org.apache.pinot.common.assignment.InstancePartitionsUtils;
import org.apache.pinot.common.metadata.segment.SegmentPartitionMetadata;
import org.apache.pinot.common.metadata.segment.SegmentZKMetadata;
import org.apache.pinot.common.utils.ZkStarter;
import org.apache.pinot.controller.ControllerConf;
import org.apache.pinot.controller.ControllerStarter;
import org.apache.pinot.controller.helix.core.PinotHelixResourceManager;
import org.apache.pinot.controller.helix.core.rebalance.RebalanceConfig;
import org.apache.pinot.controller.helix.core.rebalance.RebalanceResult;
import org.apache.pinot.controller.helix.core.rebalance.TableRebalancer;
import org.apache.pinot.segment.spi.index.metadata.SegmentMetadataImpl;
import org.apache.pinot.spi.config.instance.Instance;
import org.apache.pinot.spi.config.instance.InstanceType;
import org.apache.pinot.spi.config.table.TableConfig;
import org.apache.pinot.spi.config.table.assignment.InstancePartitionsType;
import org.apache.pinot.spi.data.Schema;
import org.apache.pinot.spi.env.PinotConfiguration;
import org.apache.pinot.spi.utils.Enablement;
import org.apache.pinot.spi.utils.JsonUtils;


/**
 * A real Pinot controller ({@link ControllerStarter}, Helix and all, against an in-process ZooKeeper) given the same
 * request as {@link ControllerParts}, answering in the same form: the check that the in-process driver's stand-in for
 * Helix changes nothing.
 *
 * <p>The controller starts with {@code cluster.tenant.isolation.enable=true}; the request's servers are added as
 * Helix instance configs with their names, tags and pools (no server process runs: assignment reads only the
 * configs); a broker instance tagged {@code DefaultTenant_BROKER} lets tables be created. Each table gets its schema
 * and config ({@code PinotHelixResourceManager.addSchema}, {@code addTable}: instance assignment persisted as Pinot
 * persists it), then each segment, built by Pinot's segment creator from its rows (so its partition metadata is
 * Pinot's), is added with {@code addNewSegment} (the upload path's assignment). With {@code newInstances}, the servers
 * not there yet are added and each table is rebalanced by {@code TableRebalancer} as a dry run with
 * reassignInstances. The response adds each segment's partition metadata as stored in ZooKeeper.
 *
 * <p>Usage: {@code java -cp 'lib/*:classes' workbench.groundtruth.RealController REQUEST.json RESPONSE.json}; the
 * request as ControllerParts', plus {@code controllerPort}, per table {@code schema}, and per segment {@code rows}.
 */
public final class RealController {
  private static final String CLUSTER = "workbench";

  private RealController() {
  }

  public static void main(String[] args) {
    DriverMain.main("RealController", args, RealController::run);
  }

  static ObjectNode run(JsonNode request)
      throws Exception {
    File work = new File(request.get("workDir").asText());
    ZkStarter.ZookeeperInstance zk =
        ZkStarter.startLocalZkServer(request.get("zkPort").asInt(), new File(work, "zk").getPath());
    ControllerStarter controller = new ControllerStarter();
    boolean started = false;
    try {
      Map<String, Object> conf = new HashMap<>();
      conf.put(ControllerConf.ZK_STR, zk.getZkUrl());
      conf.put(ControllerConf.HELIX_CLUSTER_NAME, CLUSTER);
      conf.put(ControllerConf.CONTROLLER_HOST, "127.0.0.1");
      conf.put(ControllerConf.CONTROLLER_PORT, request.get("controllerPort").asText());
      conf.put(ControllerConf.DATA_DIR, new File(work, "data").getPath());
      conf.put("cluster.tenant.isolation.enable", "true");
      controller.init(new PinotConfiguration(conf));
      controller.start();
      started = true;
      return answer(controller, request, work);
    } finally {
      if (started) {
        controller.stop();
      }
      ZkStarter.stopLocalZkServer(zk);
    }
  }

  private static ObjectNode answer(ControllerStarter controller, JsonNode request, File work)
      throws Exception {
    PinotHelixResourceManager manager = controller.getHelixResourceManager();
    manager.addInstance(new Instance("127.0.0.1", 8099, InstanceType.BROKER, List.of("DefaultTenant_BROKER"), null, 0,
        0, 0, 0, false), false);
    Set<String> added = new HashSet<>();
    for (JsonNode server : request.get("instances")) {
      addServer(manager, server, added);
    }
    ObjectNode response = JsonUtils.newObjectNode();
    response.put("pinotVersion", ControllerParts.version());
    ArrayNode out = response.putArray("tables");
    List<TableConfig> configs = new ArrayList<>();
    File segmentsDir = new File(work, "segments");
    for (JsonNode table : request.get("tables")) {
      TableConfig config = JsonUtils.jsonNodeToObject(table.get("tableConfig"), TableConfig.class);
      Schema schema = Schema.fromString(table.get("schema").toString());
      manager.addSchema(schema, true, true);
      manager.addTable(config);
      configs.add(config);
      String tableNameWithType = config.getTableName();
      ObjectNode partitions = JsonUtils.newObjectNode();
      for (JsonNode segment : table.get("segments")) {
        String name = segment.get("name").asText();
        File rows = new File(work, name + ".jsonl");
        StringBuilder lines = new StringBuilder();
        segment.get("rows").forEach(r -> lines.append(r.toString()).append('\n'));
        Files.writeString(rows.toPath(), lines.toString(), StandardCharsets.UTF_8);
        File dir = PinotParts.createSegment(config, schema, name, rows, segmentsDir);
        manager.addNewSegment(tableNameWithType, new SegmentMetadataImpl(dir), "file://" + dir);
        SegmentZKMetadata zkMetadata = manager.getSegmentZKMetadata(tableNameWithType, name);
        SegmentPartitionMetadata stored = zkMetadata != null ? zkMetadata.getPartitionMetadata() : null;
        if (stored != null) {
          ObjectNode columns = partitions.putObject(name);
          stored.getColumnPartitionMap().forEach((c, m) -> columns.set(c, JsonUtils.objectToJsonNode(m.getPartitions())));
        }
      }
      ObjectNode entry = out.addObject();
      entry.put("tableNameWithType", tableNameWithType);
      entry.set("instancePartitions", stored(manager, tableNameWithType));
      entry.set("idealState", JsonUtils.objectToJsonNode(
          new TreeMap<>(manager.getTableIdealState(tableNameWithType).getRecord().getMapFields())));
      entry.set("zkPartitions", partitions);
    }
    if (request.hasNonNull("newInstances")) {
      for (JsonNode server : request.get("newInstances")) {
        addServer(manager, server, added);
      }
      int i = 0;
      for (JsonNode table : request.get("tables")) {
        TableConfig config = configs.get(i);
        RebalanceConfig rebalanceConfig = new RebalanceConfig();
        rebalanceConfig.setDryRun(true);
        rebalanceConfig.setReassignInstances(true);
        rebalanceConfig.setMinimizeDataMovement(
            Enablement.valueOf(table.path("minimizeDataMovement").asText("DEFAULT")));
        RebalanceResult result = new TableRebalancer(manager.getHelixZkManager())
            .rebalance(config, rebalanceConfig, TableRebalancer.createUniqueRebalanceJobIdentifier());
        if (result.getSegmentAssignment() == null) {
          throw new IllegalStateException(config.getTableName() + ": rebalance " + result.getStatus() + ": "
              + result.getDescription());
        }
        ObjectNode rebalanced = ((ObjectNode) out.get(i++)).putObject("rebalanced");
        Map<InstancePartitionsType, InstancePartitions> ips = result.getInstanceAssignment();
        ObjectNode ipsOut = JsonUtils.newObjectNode();
        if (ips != null) {
          ips.forEach((type, ip) -> ipsOut.set(type.toString(),
              JsonUtils.objectToJsonNode(new TreeMap<>(ip.getPartitionToInstancesMap()))));
        }
        rebalanced.set("instancePartitions", ipsOut);
        rebalanced.set("idealState", JsonUtils.objectToJsonNode(new TreeMap<>(result.getSegmentAssignment())));
      }
    }
    return response;
  }

  /** The table's OFFLINE instance partitions as stored in ZooKeeper (none for default ones: Pinot stores none). */
  private static ObjectNode stored(PinotHelixResourceManager manager, String tableNameWithType) {
    ObjectNode out = JsonUtils.newObjectNode();
    String name = InstancePartitionsUtils.getInstancePartitionsName(tableNameWithType, "OFFLINE");
    InstancePartitions ip = InstancePartitionsUtils.fetchInstancePartitions(manager.getPropertyStore(), name);
    if (ip != null) {
      out.set("OFFLINE", JsonUtils.objectToJsonNode(new TreeMap<>(ip.getPartitionToInstancesMap())));
    }
    return out;
  }

  /** A server's Helix instance config with the request's name, tags and pools (no server process runs). */
  private static void addServer(PinotHelixResourceManager manager, JsonNode spec, Set<String> added) {
    String name = spec.get("name").asText();
    if (!added.add(name)) {
      return;
    }
    InstanceConfig config = new InstanceConfig(name);
    config.setInstanceEnabled(true);
    spec.get("tags").forEach(t -> config.addTag(t.asText()));
    if (spec.hasNonNull("pools")) {
      Map<String, String> pools = new TreeMap<>();
      spec.get("pools").fields().forEachRemaining(e -> pools.put(e.getKey(), e.getValue().asText()));
      config.getRecord().setMapField("pool", pools);
    }
    manager.getHelixAdmin().addInstance(manager.getHelixClusterName(), config);
  }
}
