package workbench.groundtruth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.pinot.broker.querylog.QueryLogger;
import org.apache.pinot.broker.routing.segmentpruner.SegmentPruner;
import org.apache.pinot.common.datatable.DataTable;
import org.apache.pinot.common.metadata.segment.SegmentZKMetadataUtils;
import org.apache.pinot.common.metrics.BrokerMetrics;
import org.apache.pinot.common.request.BrokerRequest;
import org.apache.pinot.common.request.PinotQuery;
import org.apache.pinot.common.response.broker.BrokerResponseNative;
import org.apache.pinot.common.response.broker.QueryProcessingException;
import org.apache.pinot.core.operator.blocks.InstanceResponseBlock;
import org.apache.pinot.core.plan.maker.InstancePlanMakerImplV2;
import org.apache.pinot.core.query.config.SegmentPrunerConfig;
import org.apache.pinot.core.query.optimizer.QueryOptimizer;
import org.apache.pinot.core.query.pruner.SegmentPrunerService;
import org.apache.pinot.core.query.pruner.SegmentPrunerStatistics;
import org.apache.pinot.core.query.reduce.BrokerReduceService;
import org.apache.pinot.core.operator.blocks.results.ResultsBlockUtils;
import org.apache.pinot.core.query.request.context.QueryContext;
import org.apache.pinot.core.query.request.context.utils.QueryContextConverterUtils;
import org.apache.pinot.core.transport.ServerInstance;
import org.apache.pinot.core.transport.ServerResponse;
import org.apache.pinot.core.transport.ServerRoutingInstance;
import org.apache.pinot.segment.local.indexsegment.immutable.ImmutableSegmentLoader;
import org.apache.pinot.segment.local.segment.creator.impl.SegmentIndexCreationDriverImpl;
import org.apache.pinot.segment.local.segment.index.loader.IndexLoadingConfig;
import org.apache.pinot.segment.local.segment.readers.GenericRowRecordReader;
import org.apache.pinot.segment.spi.ImmutableSegment;
import org.apache.pinot.segment.spi.IndexSegment;
import org.apache.pinot.segment.spi.SegmentContext;
import org.apache.pinot.segment.spi.SegmentMetadata;
import org.apache.pinot.segment.spi.creator.SegmentGeneratorConfig;
import org.apache.pinot.spi.config.table.TableConfig;
import org.apache.pinot.spi.config.table.TableType;
import org.apache.pinot.spi.data.Schema;
import org.apache.pinot.spi.data.readers.GenericRow;
import org.apache.pinot.spi.env.PinotConfiguration;
import org.apache.pinot.spi.query.QueryThreadContext;
import org.apache.pinot.spi.utils.JsonUtils;
import org.apache.pinot.spi.utils.builder.TableNameBuilder;
import org.apache.pinot.sql.parsers.CalciteSqlCompiler;
import org.apache.pinot.sql.parsers.CalciteSqlParser;


/**
 * Pinot's own parts, driven from one request file: the ground truth the workbench's model is checked against.
 *
 * <p>The jars are a pinned Apache Pinot release from Maven Central (probes/pinot/pom.xml). Nothing here
 * re-implements Pinot: segments are built by Pinot's segment creator, their ZooKeeper metadata is made by the
 * controller's {@code SegmentZKMetadataUtils} and stored in a real (in-process) ZooKeeper, the broker's pruners
 * and instance selector come from the broker's own factories and are initialised as the broker's routing
 * manager does, and each server's share of a query runs through the server's pruner service, plan maker and
 * combine operators, its data table reduced by the broker's reduce service.
 *
 * <p>What it cannot be: a cluster. Its latencies mean nothing, and the broker's and servers' threads,
 * queues, network and query log are not here (Maven Central as served on this machine lacks pinot-server
 * and pinot-tools at the 1.x releases).
 *
 * <p>Usage: {@code java -cp 'lib/*:classes' workbench.groundtruth.PinotParts REQUEST.json RESPONSE.json}.
 * The request names the table config and schema (the user's JSON, unchanged), the segments (a name and a
 * JSON-lines file of rows each), the servers and the ideal state (segment to servers), and the queries
 * (SQL and the broker request id each is routed with). The response has Pinot's segment ZK metadata and,
 * per query, the broker's routing and the reduced response's metadata.
 */
public final class PinotParts {
  private PinotParts() {
  }

  public static void main(String[] args) {
    DriverMain.main("PinotParts", args, PinotParts::run);
  }

  static ObjectNode run(JsonNode request)
      throws Exception {
    TableConfig tableConfig = JsonUtils.jsonNodeToObject(request.get("tableConfig"), TableConfig.class);
    Schema schema = Schema.fromString(request.get("schema").toString());
    String tableNameWithType = tableConfig.getTableName();
    TableType tableType = tableConfig.getTableType();
    File workDir = new File(request.get("workDir").asText());
    File segmentsDir = new File(workDir, "segments");
    segmentsDir.mkdirs();

    ObjectNode response = JsonUtils.newObjectNode();
    response.put("pinotVersion", pinotVersion());
    Map<String, ImmutableSegment> segments = new LinkedHashMap<>();
    Map<String, SegmentMetadata> metadata = new LinkedHashMap<>();
    Map<String, Long> sizes = new HashMap<>();
    for (JsonNode spec : request.get("segments")) {
      ImmutableSegment segment = buildSegment(tableConfig, schema, spec, segmentsDir);
      segments.put(segment.getSegmentName(), segment);
      metadata.put(segment.getSegmentName(), segment.getSegmentMetadata());
      sizes.put(segment.getSegmentName(), segment.getSegmentSizeBytes());
    }
    List<String> serverNames = new ArrayList<>();
    request.get("servers").forEach(s -> serverNames.add(s.asText()));
    PinotConfiguration brokerConfig = new PinotConfiguration(configMap(request.get("brokerConfig")));
    ExecutorService executor = QueryThreadContext.contextAwareExecutorService(Executors.newFixedThreadPool(2));
    try (BrokerRouting routing = new BrokerRouting(tableConfig, schema, metadata, sizes, request.get("idealState"),
        serverNames, brokerConfig, new File(workDir, "zk"), request.get("zkPort").asInt())) {
      ArrayNode segmentsOut = response.putArray("segments");
      routing.zkMetadata().forEach((name, fields) -> {
        ObjectNode entry = segmentsOut.addObject();
        entry.put("segmentName", name);
        entry.set("zkMetadata", JsonUtils.objectToJsonNode(fields));
      });
      response.putArray("prunerTypes").addAll(names(routing.pruners()));
      response.put("instanceSelectorType", routing.selector().getClass().getSimpleName());

      QueryLogger queryLogger = new QueryLogger(brokerConfig);
      ArrayNode queriesOut = response.putArray("queries");
      for (JsonNode query : request.get("queries")) {
        queriesOut.add(runQuery(query, tableConfig, schema, routing, segments, tableType, executor, queryLogger));
      }
    } finally {
      executor.shutdownNow();
    }
    return response;
  }

  private static ArrayNode names(List<SegmentPruner> pruners) {
    ArrayNode out = JsonUtils.newArrayNode();
    pruners.forEach(p -> out.add(p.getClass().getSimpleName()));
    return out;
  }

  /** A JSON object of settings as Pinot configuration properties (values as text). */
  public static Map<String, Object> configMap(JsonNode node) {
    Map<String, Object> map = new HashMap<>();
    if (node != null) {
      node.fields().forEachRemaining(e -> map.put(e.getKey(), e.getValue().asText()));
    }
    return map;
  }

  private static String pinotVersion() {
    Package pkg = TableConfig.class.getPackage();
    String version = pkg != null ? pkg.getImplementationVersion() : null;
    return version != null ? version : "unknown";
  }

  /** One segment, built by Pinot's segment creator from a JSON-lines file of rows, then loaded as a server would. */
  private static ImmutableSegment buildSegment(TableConfig tableConfig, Schema schema, JsonNode spec, File dir)
      throws Exception {
    String name = spec.get("name").asText();
    createSegment(tableConfig, schema, name, new File(spec.get("rows").asText()), dir);
    return ImmutableSegmentLoader.load(new File(dir, name), new IndexLoadingConfig(tableConfig, schema));
  }

  /**
   * Pinot's segment creator on a JSON-lines file of rows: the segment directory {@code dir/name}. Public so the
   * cluster processes (workbench.cluster) build their segments with exactly this code.
   */
  public static File createSegment(TableConfig tableConfig, Schema schema, String name, File rowsFile, File dir)
      throws Exception {
    List<GenericRow> rows = new ArrayList<>();
    try (BufferedReader reader = Files.newBufferedReader(rowsFile.toPath())) {
      String line;
      while ((line = reader.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        GenericRow row = new GenericRow();
        Map<String, Object> values = JsonUtils.stringToObject(line, Map.class);
        values.forEach(row::putValue);
        rows.add(row);
      }
    }
    SegmentGeneratorConfig config = new SegmentGeneratorConfig(tableConfig, schema);
    config.setOutDir(dir.getPath());
    config.setSegmentName(name);
    config.setTableName(TableNameBuilder.extractRawTableName(tableConfig.getTableName()));
    SegmentIndexCreationDriverImpl driver = new SegmentIndexCreationDriverImpl();
    driver.init(config, new GenericRowRecordReader(rows));
    driver.build();
    return new File(dir, name);
  }

  private static ObjectNode runQuery(JsonNode query, TableConfig tableConfig, Schema schema, BrokerRouting routing,
      Map<String, ImmutableSegment> segments, TableType tableType, ExecutorService executor, QueryLogger queryLogger) {
    ObjectNode out = JsonUtils.newObjectNode();
    String sql = query.get("sql").asText();
    long requestId = query.get("requestId").asLong();
    long arrivalMs = System.currentTimeMillis();
    boolean logged = queryLogger.logQueryReceived(requestId, sql);
    out.put("sql", sql);
    out.put("requestId", requestId);
    try (QueryThreadContext ignored = QueryThreadContext.openForSseTest()) {
      // The broker: compile, name the physical table, optimise (as the single-stage request handler does
      // before routing), then the routing manager's calculateRouting: prune, then select instances.
      PinotQuery pinotQuery = CalciteSqlParser.compileToPinotQuery(sql);
      String tableName = pinotQuery.getDataSource().getTableName();
      pinotQuery.getDataSource().setTableName(tableConfig.getTableName());
      new QueryOptimizer().optimize(pinotQuery, schema);
      BrokerRequest brokerRequest = CalciteSqlCompiler.convertToBrokerRequest(pinotQuery);
      BrokerRouting.Route route = routing.route(brokerRequest, requestId);
      Map<String, String> segmentToServer = route.segmentToServer;
      out.put("numSegmentsPrunedByBroker", route.reportedPruned());
      out.putArray("segmentsAfterBrokerPruning").addAll(textArray(new TreeSet<>(route.segmentsAfterPruning)));
      out.putArray("unavailableSegments").addAll(textArray(new TreeSet<>(route.unavailableSegments)));
      out.put("brokerFilter", String.valueOf(pinotQuery.getFilterExpression()));
      out.set("segmentToServer", JsonUtils.objectToJsonNode(new TreeMap<>(segmentToServer)));

      // Each server: its segments through the server's pruner service, plan maker and combine.
      Map<String, List<IndexSegment>> perServer = new TreeMap<>();
      segmentToServer.forEach((seg, server) -> perServer.computeIfAbsent(server, s -> new ArrayList<>())
          .add(segments.get(seg)));
      Map<ServerRoutingInstance, DataTable> tables = new HashMap<>();
      // The broker's per-server stats, as AsyncQueryResponse.getServerStats formats them (no network here:
      // each server's ServerResponse is one that was never submitted).
      StringBuilder serverStats =
          new StringBuilder("(Server=SubmitDelayMs,ResponseDelayMs,ResponseSize,DeserializationTimeMs,RequestSentDelayMs)");
      for (Map.Entry<String, List<IndexSegment>> e : perServer.entrySet()) {
        ServerRoutingInstance instance =
            routing.servers().get(e.getKey()).toServerRoutingInstance(tableType, ServerInstance.RoutingType.NETTY);
        tables.put(instance, executeOnServer(pinotQuery, schema, e.getValue(), executor));
        serverStats.append(';').append(instance.getShortName()).append('=').append(new ServerResponse(arrivalMs));
      }
      BrokerResponseNative reduced = tables.isEmpty() ? BrokerResponseNative.empty() : reduce(brokerRequest, tables);
      reduced.setNumServersQueried(perServer.size());
      reduced.setNumServersResponded(perServer.size());
      reduced.setNumSegmentsPrunedByBroker(route.reportedPruned());
      reduced.setTimeUsedMs(System.currentTimeMillis() - arrivalMs);
      BrokerRouting.logCompleted(queryLogger, logged, requestId, arrivalMs, sql, tableName, reduced,
          route.unavailableSegments.size(), serverStats.toString());
      out.put("numServersQueried", perServer.size());
      out.put("numServersResponded", perServer.size());
      out.put("numDocsScanned", reduced.getNumDocsScanned());
      out.put("numEntriesScannedInFilter", reduced.getNumEntriesScannedInFilter());
      out.put("numEntriesScannedPostFilter", reduced.getNumEntriesScannedPostFilter());
      out.put("totalDocs", reduced.getTotalDocs());
      out.put("numSegmentsQueried", reduced.getNumSegmentsQueried());
      out.put("numSegmentsProcessed", reduced.getNumSegmentsProcessed());
      out.put("numSegmentsMatched", reduced.getNumSegmentsMatched());
      out.put("numSegmentsPrunedByServer", reduced.getNumSegmentsPrunedByServer());
      out.put("numRowsResultSet", reduced.getNumRowsResultSet());
      ArrayNode exceptions = out.putArray("exceptions");
      for (QueryProcessingException e : reduced.getExceptions()) {
        exceptions.add(e.getErrorCode() + ": " + e.getMessage());
      }
    } catch (Exception e) {
      out.putArray("exceptions").add(e.getClass().getSimpleName() + ": " + e.getMessage());
    }
    return out;
  }

  /** The server's part of one query (ServerQueryExecutorV1Impl: server pruning, plan, execute, metadata). */
  private static DataTable executeOnServer(PinotQuery pinotQuery, Schema schema, List<IndexSegment> indexSegments,
      ExecutorService executor)
      throws Exception {
    QueryContext queryContext = QueryContextConverterUtils.getQueryContext(pinotQuery);
    queryContext.setSchema(schema);
    queryContext.setEndTimeMs(System.currentTimeMillis() + 60_000L);
    long totalDocs = 0;
    for (IndexSegment segment : indexSegments) {
      totalDocs += segment.getSegmentMetadata().getTotalDocs();
    }
    SegmentPrunerStatistics stats = new SegmentPrunerStatistics();
    SegmentPrunerService prunerService = new SegmentPrunerService(new SegmentPrunerConfig(new PinotConfiguration()));
    List<IndexSegment> selected = prunerService.prune(new ArrayList<>(indexSegments), queryContext, stats, executor);
    List<SegmentContext> contexts = new ArrayList<>();
    selected.forEach(s -> contexts.add(new SegmentContext(s)));
    // As executeQuery does: a server whose segments were all pruned answers with empty results, unplanned.
    InstanceResponseBlock block = contexts.isEmpty()
        ? new InstanceResponseBlock(ResultsBlockUtils.buildEmptyQueryResults(queryContext))
        : new InstancePlanMakerImplV2().makeInstancePlan(contexts, queryContext, executor).execute();
    block.addMetadata(DataTable.MetadataKey.TOTAL_DOCS.getName(), Long.toString(totalDocs));
    block.addMetadata(DataTable.MetadataKey.NUM_SEGMENTS_PRUNED_BY_SERVER.getName(),
        String.valueOf(indexSegments.size() - selected.size()));
    block.addMetadata(DataTable.MetadataKey.NUM_SEGMENTS_QUERIED.getName(), Integer.toString(indexSegments.size()));
    return block.toDataTable();
  }

  private static BrokerResponseNative reduce(BrokerRequest brokerRequest, Map<ServerRoutingInstance, DataTable> tables) {
    BrokerReduceService reduceService = new BrokerReduceService(new PinotConfiguration());
    try {
      return reduceService.reduceOnDataTable(brokerRequest, brokerRequest, tables, 60_000L, BrokerMetrics.get());
    } finally {
      reduceService.shutDown();
    }
  }

  private static ArrayNode textArray(Iterable<String> values) {
    ArrayNode out = JsonUtils.newArrayNode();
    values.forEach(out::add);
    return out;
  }
}
