package workbench.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.helix.model.InstanceConfig;
import org.apache.pinot.common.datatable.DataTable;
import org.apache.pinot.common.metrics.BrokerMetrics;
import org.apache.pinot.common.request.BrokerRequest;
import org.apache.pinot.common.request.PinotQuery;
import org.apache.pinot.common.response.broker.BrokerResponseNative;
import org.apache.pinot.common.response.broker.QueryProcessingException;
import org.apache.pinot.common.response.broker.ResultTable;
import org.apache.commons.io.FileUtils;
import org.apache.pinot.broker.querylog.QueryLogger;
import org.apache.pinot.core.query.optimizer.QueryOptimizer;
import org.apache.pinot.core.query.reduce.BrokerReduceService;
import org.apache.pinot.core.routing.SegmentsToQuery;
import org.apache.pinot.core.transport.AsyncQueryResponse;
import org.apache.pinot.core.transport.QueryResponse;
import org.apache.pinot.core.transport.QueryRouter;
import org.apache.pinot.core.transport.ServerInstance;
import org.apache.pinot.core.transport.ServerResponse;
import org.apache.pinot.core.transport.ServerRoutingInstance;
import org.apache.pinot.core.transport.server.routing.stats.ServerRoutingStatsManager;
import org.apache.pinot.broker.routing.adaptiveserverselector.AdaptiveServerSelector;
import org.apache.pinot.broker.routing.adaptiveserverselector.AdaptiveServerSelectorFactory;
import org.apache.pinot.common.utils.config.QueryOptionsUtils;
import org.apache.pinot.spi.accounting.ThreadAccountant;
import org.apache.pinot.spi.accounting.ThreadAccountantUtils;
import org.apache.pinot.spi.query.QueryExecutionContext;
import org.apache.pinot.spi.query.QueryThreadContext;
import org.apache.pinot.spi.utils.CommonConstants;
import org.apache.pinot.segment.spi.SegmentMetadata;
import org.apache.pinot.segment.spi.index.metadata.SegmentMetadataImpl;
import org.apache.pinot.spi.config.table.TableConfig;
import org.apache.pinot.spi.data.Schema;
import org.apache.pinot.spi.env.PinotConfiguration;
import org.apache.pinot.spi.exception.QueryErrorCode;
import org.apache.pinot.spi.utils.CommonConstants.Broker.Request.QueryOptionKey;
import org.apache.pinot.spi.utils.JsonUtils;
import org.apache.pinot.spi.utils.builder.TableNameBuilder;
import org.apache.pinot.sql.parsers.CalciteSqlCompiler;
import org.apache.pinot.sql.parsers.CalciteSqlParser;
import workbench.groundtruth.BrokerRouting;
import workbench.groundtruth.PinotParts;


/**
 * A broker's single-stage scatter-gather, driven open-loop at Poisson arrival times against {@link PinotServer}s.
 *
 * <p>Each query goes the way {@code SingleConnectionBrokerRequestHandler.processBrokerRequest} sends it at 1.5.1:
 * compiled by Pinot's SQL compiler and query optimiser, its {@code timeoutMs} query option set to the time left (and
 * {@code serverReturnFinalResult} when one server answers, as the broker sets it), sent by Pinot's
 * {@link QueryRouter} over Netty to the servers holding its segments, gathered through {@link AsyncQueryResponse},
 * and reduced by {@link BrokerReduceService}, with the broker's own exceptions for servers that did not respond.
 * Routing is the broker's too: each query goes through {@link BrokerRouting} (the table's pruners from
 * {@code SegmentPrunerFactory} and its instance selector from {@code InstanceSelectorFactory}, on the ideal state the
 * caller gives, as {@code BaseBrokerRoutingManager.calculateRouting} runs them with the query's request id), and every
 * completed query is written to the broker query log by Pinot's {@code QueryLogger} (its {@code timeMs} is the
 * broker's {@code timeUsedMs}: from receiving the SQL to the reduced response). Not here: the HTTP front end, query
 * quotas, access control, the failure detector.
 *
 * <p>Open loop ({@link OpenLoop}, shared with {@link HttpLoad}): Poisson arrivals from {@code Random(seed)}, each
 * query handed to a worker at its due time, its request id taken in arrival order.
 *
 * <p>Usage: {@code LoadGenerator SPEC.json OUT.jsonl}. SPEC: {@code tableName} (with type), {@code tableConfig} and
 * {@code schema} (paths), {@code segmentsDir} and {@code segments} (the built segments, read for their ZK metadata),
 * {@code servers} ({@code Server_host_port} names), {@code idealState} (segment to {instance: ONLINE}),
 * {@code zkDir}, {@code zkPort}, optional {@code zkMetadataOut} (each segment's ZK metadata as the controller's
 * {@code GET /segments/{table}/zkmetadata} returns it), {@code brokerConfig}, {@code queries} (path, one SQL per
 * line, used in turn), {@code ratePerSecond}, {@code seed}, {@code numQueries}, optional {@code durationS},
 * {@code timeoutMs}, {@code threads}, {@code warmupQueries} (run one at a time first, neither recorded nor in the query
 * log), {@code resultRows}. Prints {@code ROUTING ...} once routing is built, writes
 * one JSON line per query as it completes and prints {@code DONE ...} when all are in.
 */
public final class LoadGenerator {
  private static final String BROKER_ID = "Broker_workbench";

  private LoadGenerator() {
  }

  public static void main(String[] args) {
    OpenLoop.main(args, "LoadGenerator", LoadGenerator::run);
  }


  /** Everything one query needs, shared read-only by the workers. */
  private static final class Broker {
    final String _tableNameWithType;
    final Schema _schema;
    final BrokerRouting _routing;
    final QueryLogger _queryLogger;
    final QueryRouter _router;
    final BrokerReduceService _reduce;
    final long _timeoutMs;
    final int _resultRows;
    final ThreadAccountant _accountant = ThreadAccountantUtils.getNoOpAccountant();

    Broker(String tableNameWithType, Schema schema, BrokerRouting routing, QueryLogger queryLogger, QueryRouter router,
        BrokerReduceService reduce, long timeoutMs, int resultRows) {
      _tableNameWithType = tableNameWithType;
      _schema = schema;
      _routing = routing;
      _queryLogger = queryLogger;
      _router = router;
      _reduce = reduce;
      _timeoutMs = timeoutMs;
      _resultRows = resultRows;
    }
  }

  private static void run(JsonNode spec, File outFile)
      throws Exception {
    String tableNameWithType = spec.get("tableName").asText();
    Schema schema = Schema.fromFile(new File(spec.get("schema").asText()));
    OpenLoop load = new OpenLoop(spec);
    int resultRows = spec.path("resultRows").asInt(10);

    // The broker's routing, built as Pinot's broker builds it (BrokerRouting): each segment's ZK metadata from the
    // built segment's own metadata, the table's pruners and instance selector on the given ideal state.
    TableConfig tableConfig = JsonUtils.fileToObject(new File(spec.get("tableConfig").asText()), TableConfig.class);
    File segmentsDir = new File(spec.get("segmentsDir").asText());
    Map<String, SegmentMetadata> metadata = new LinkedHashMap<>();
    Map<String, Long> sizes = new HashMap<>();
    for (JsonNode name : spec.get("segments")) {
      File dir = new File(segmentsDir, name.asText());
      metadata.put(name.asText(), new SegmentMetadataImpl(dir));
      sizes.put(name.asText(), FileUtils.sizeOfDirectory(dir));
    }
    List<String> serverNames = new ArrayList<>();
    spec.get("servers").forEach(s -> serverNames.add(s.asText()));
    PinotConfiguration brokerConfig = new PinotConfiguration(PinotParts.configMap(spec.get("brokerConfig")));
    // The broker's routing stats (in-flight requests and latency EMAs per server, fed by the QueryRouter) and the
    // adaptive server selector made from the broker config, as BaseBrokerStarter builds them: with the default
    // config, stats collection is off and there is no adaptive selector.
    ServerRoutingStatsManager stats = new ServerRoutingStatsManager(brokerConfig, BrokerMetrics.get());
    stats.init();
    AdaptiveServerSelector adaptive = AdaptiveServerSelectorFactory.getAdaptiveServerSelector(stats, brokerConfig);
    BrokerRouting routing = new BrokerRouting(tableConfig, schema, metadata, sizes, spec.get("idealState"),
        serverNames, brokerConfig, new File(spec.get("zkDir").asText()), spec.get("zkPort").asInt(), adaptive);
    if (spec.hasNonNull("zkMetadataOut")) {
      Files.writeString(new File(spec.get("zkMetadataOut").asText()).toPath(),
          JsonUtils.objectToPrettyString(routing.zkMetadata()), StandardCharsets.UTF_8);
    }
    System.out.println("ROUTING pruners=" + names(routing) + " selector="
        + routing.selector().getClass().getSimpleName() + " adaptive="
        + (adaptive == null ? "none" : adaptive.getClass().getSimpleName()));
    System.out.flush();

    QueryRouter router =
        new QueryRouter(BROKER_ID, null, null, stats, ThreadAccountantUtils.getNoOpAccountant());
    BrokerReduceService reduce = new BrokerReduceService(new PinotConfiguration());
    Broker broker = new Broker(tableNameWithType, schema, routing, new QueryLogger(brokerConfig), router, reduce,
        load._timeoutMs, resultRows);
    // With adaptive selection the warm-up goes through a router that feeds no stats, so the selector finds none
    // and picks at random (HybridSelector and the others do without stats): every replica is warmed. Through the
    // measured router, the first cold server's first answer (hundreds of ms) would make the selector shun it.
    QueryRouter warmRouter = adaptive == null ? router : new QueryRouter(BROKER_ID, null, null,
        new ServerRoutingStatsManager(new PinotConfiguration(), BrokerMetrics.get()),
        ThreadAccountantUtils.getNoOpAccountant());
    Broker warmBroker = adaptive == null ? broker : new Broker(tableNameWithType, schema, routing,
        new QueryLogger(brokerConfig), warmRouter, reduce, load._timeoutMs, resultRows);
    for (ServerInstance server : routing.servers().values()) {
      if (!router.connect(server) || (warmRouter != router && !warmRouter.connect(server))) {
        throw new IllegalStateException("cannot connect to " + server.getInstanceId());
      }
    }
    AtomicLong requestIds = new AtomicLong(1);
    for (int i = 0; load.warming(i); i++) {
      runQuery(warmBroker, requestIds.getAndIncrement(), load.warmupSql(i), false);
    }
    load.settle(index -> {
      long requestId = requestIds.getAndIncrement();
      return () -> runQuery(warmBroker, requestId, load.warmupSql(index), false);
    });
    if (warmRouter != router) {
      warmRouter.shutDown();
    }
    load.awaitStartSignal();
    try {
      load.run(outFile, index -> {
        long requestId = requestIds.getAndIncrement();
        return () -> runQuery(broker, requestId, load._queries.get(index), true);
      });
    } finally {
      router.shutDown();
      reduce.shutDown();
      routing.close();
    }
  }

  private static String names(BrokerRouting routing) {
    List<String> names = new ArrayList<>();
    routing.pruners().forEach(p -> names.add(p.getClass().getSimpleName()));
    return String.join(",", names);
  }

  /** One query through the broker's scatter-gather and reduce; never throws (an error is a record's exception). */
  static ObjectNode runQuery(Broker broker, long requestId, String sql, boolean log) {
    ObjectNode record = JsonUtils.newObjectNode();
    record.put("requestId", requestId);
    record.put("sql", sql);
    ArrayNode exceptions = record.putArray("exceptions");
    long start = System.nanoTime();
    long arrivalMs = System.currentTimeMillis();
    // Warm-up queries stay out of the query log: the log is the measured run, as the records are.
    QueryLogger queryLogger = log ? broker._queryLogger : null;
    boolean logged = queryLogger != null && queryLogger.logQueryReceived(requestId, sql);
    try {
      // As the broker: the request names the physical table and is optimised; the timeout option carries the time
      // left after compiling. The broker reduces with the server request as the original one too (they differ only
      // for gapfill queries, which are not supported here).
      PinotQuery pinotQuery = CalciteSqlParser.compileToPinotQuery(sql);
      // As BaseSingleStageBrokerRequestHandler.handleRequest: the query's thread context (the reduce needs it).
      QueryExecutionContext executionContext = new QueryExecutionContext(QueryExecutionContext.QueryType.SSE,
          requestId, Long.toString(requestId), QueryOptionsUtils.getWorkloadName(pinotQuery.getQueryOptions() == null
          ? Map.of() : pinotQuery.getQueryOptions()), System.currentTimeMillis(), Long.MAX_VALUE, Long.MAX_VALUE,
          BROKER_ID, BROKER_ID, CommonConstants.Broker.DEFAULT_QUERY_HASH);
      try (QueryThreadContext ignored = QueryThreadContext.open(executionContext, broker._accountant)) {
        scatterGatherReduce(broker, queryLogger, requestId, sql, pinotQuery, start, arrivalMs, logged, record,
            exceptions);
      }
    } catch (Exception e) {
      record.put("latencyMs", (System.nanoTime() - start) / 1e6);
      exceptions.add("broker: " + e);
    }
    return record;
  }

  private static void scatterGatherReduce(Broker broker, QueryLogger queryLogger, long requestId, String sql, PinotQuery pinotQuery, long start,
      long arrivalMs, boolean logged, ObjectNode record, ArrayNode exceptions)
      throws Exception {
    String tableName = pinotQuery.getDataSource().getTableName();
    String rawTableName = TableNameBuilder.extractRawTableName(tableName);
    pinotQuery.getDataSource().setTableName(broker._tableNameWithType);
    new QueryOptimizer().optimize(pinotQuery, broker._schema);
    BrokerRequest serverRequest = CalciteSqlCompiler.convertToBrokerRequest(pinotQuery);
    // As BaseBrokerRoutingManager.calculateRouting: the table's pruners, then its instance selector on this id.
    BrokerRouting.Route route = broker._routing.route(serverRequest, requestId);
    Map<ServerInstance, List<String>> perServer = new LinkedHashMap<>();
    route.segmentToServer.forEach((segment, server) -> perServer.computeIfAbsent(
        broker._routing.servers().get(server), s -> new ArrayList<>()).add(segment));
    Map<ServerInstance, SegmentsToQuery> routing = new LinkedHashMap<>();
    perServer.forEach((server, segments) -> routing.put(server, new SegmentsToQuery(segments, List.of())));
    record.put("numSegmentsPrunedByBroker", route.reportedPruned());
    record.put("numUnavailableSegments", route.unavailableSegments.size());
    Map<String, String> options = pinotQuery.getQueryOptions();
    if (options == null) {
      options = new HashMap<>();
      pinotQuery.setQueryOptions(options);
    }
    long compiledNs = System.nanoTime();
    long remainingMs = broker._timeoutMs - TimeUnit.NANOSECONDS.toMillis(compiledNs - start);
    options.put(QueryOptionKey.TIMEOUT_MS, Long.toString(remainingMs));
    if (routing.size() == 1) {
      options.putIfAbsent(QueryOptionKey.SERVER_RETURN_FINAL_RESULT, "true");
    }
    record.put("compileMs", (compiledNs - start) / 1e6);

    if (routing.isEmpty()) {
      // As the broker: every segment pruned, so no server is asked; the empty response is the answer.
      finish(broker, queryLogger, requestId, sql, tableName, BrokerResponseNative.empty(), route, "", start,
          compiledNs, arrivalMs, logged, record, exceptions);
      return;
    }
    AsyncQueryResponse async =
        broker._router.submitQuery(requestId, rawTableName, serverRequest, routing, null, null, remainingMs);
    Map<ServerRoutingInstance, ServerResponse> responses = async.getFinalResponses();
    long gatheredNs = System.nanoTime();
    record.put("scatterGatherMs", (gatheredNs - compiledNs) / 1e6);
    record.put("timedOut", async.getStatus() == QueryResponse.Status.TIMED_OUT);
    String serverStats = async.getServerStats();
    record.put("serverStats", serverStats);

    Map<ServerRoutingInstance, DataTable> dataTables = new HashMap<>();
    List<ServerRoutingInstance> notResponded = new ArrayList<>();
    ArrayNode servers = record.putArray("servers");
    for (Map.Entry<ServerRoutingInstance, ServerResponse> e : responses.entrySet()) {
      ServerResponse response = e.getValue();
      ObjectNode server = servers.addObject();
      server.put("instance", e.getKey().getInstanceId());
      server.put("submitDelayMs", response.getSubmitDelayMs());
      server.put("requestSentDelayMs", response.getRequestSentDelayMs());
      server.put("responseDelayMs", response.getResponseDelayMs());
      server.put("responseSize", response.getResponseSize());
      server.put("deserializationTimeMs", response.getDeserializationTimeMs());
      DataTable dataTable = response.getDataTable();
      if (dataTable == null) {
        notResponded.add(e.getKey());
        server.put("responded", false);
        continue;
      }
      server.put("responded", true);
      dataTables.put(e.getKey(), dataTable);
      server.set("metadata", JsonUtils.objectToJsonNode(dataTable.getMetadata()));
      ArrayNode serverExceptions = server.putArray("exceptions");
      dataTable.getExceptions().forEach((code, message) -> serverExceptions.add(code + ": " + message));
    }

    // Counted before the reduce, as SingleConnectionBrokerRequestHandler does: the reduce drops empty data tables
    // from the map it is given.
    int numServersResponded = dataTables.size();
    BrokerResponseNative reduced = broker._reduce.reduceOnDataTable(serverRequest, serverRequest, dataTables,
        broker._timeoutMs - TimeUnit.NANOSECONDS.toMillis(gatheredNs - start), BrokerMetrics.get());
    reduced.setNumServersQueried(responses.size());
    reduced.setNumServersResponded(numServersResponded);
    reduced.setBrokerReduceTimeMs(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - gatheredNs));
    if (async.getException() != null) {
      reduced.addException(
          new QueryProcessingException(QueryErrorCode.BROKER_REQUEST_SEND, async.getException().getMessage()));
    }
    if (!notResponded.isEmpty()) {
      reduced.addException(new QueryProcessingException(QueryErrorCode.SERVER_NOT_RESPONDING,
          String.format("%d servers %s not responded", notResponded.size(), notResponded)));
    }
    finish(broker, queryLogger, requestId, sql, tableName, reduced, route, serverStats, start, gatheredNs, arrivalMs,
        logged, record, exceptions);
  }

  /** The broker's last steps: the response's counters, its time, and the query log line (as the handler does). */
  private static void finish(Broker broker, QueryLogger queryLogger, long requestId, String sql, String tableName, BrokerResponseNative reduced,
      BrokerRouting.Route route, String serverStats, long start, long gatheredNs, long arrivalMs, boolean logged,
      ObjectNode record, ArrayNode exceptions) {
    reduced.setNumSegmentsPrunedByBroker(route.reportedPruned());
    long reducedNs = System.nanoTime();
    reduced.setTimeUsedMs(System.currentTimeMillis() - arrivalMs);
    if (queryLogger != null) {
      BrokerRouting.logCompleted(queryLogger, logged, requestId, arrivalMs, sql, tableName, reduced,
          route.unavailableSegments.size(), serverStats);
    }
    record.put("reduceMs", (reducedNs - gatheredNs) / 1e6);
    record.put("latencyMs", (reducedNs - start) / 1e6);
    record.put("timeMs", reduced.getTimeUsedMs());
    record.put("numServersQueried", reduced.getNumServersQueried());
    record.put("numServersResponded", reduced.getNumServersResponded());
    record.put("numDocsScanned", reduced.getNumDocsScanned());
    record.put("numEntriesScannedInFilter", reduced.getNumEntriesScannedInFilter());
    record.put("numEntriesScannedPostFilter", reduced.getNumEntriesScannedPostFilter());
    record.put("totalDocs", reduced.getTotalDocs());
    record.put("numSegmentsQueried", reduced.getNumSegmentsQueried());
    record.put("numSegmentsProcessed", reduced.getNumSegmentsProcessed());
    record.put("numSegmentsMatched", reduced.getNumSegmentsMatched());
    for (QueryProcessingException e : reduced.getExceptions()) {
      exceptions.add(e.getErrorCode() + ": " + e.getMessage());
    }
    ResultTable table = reduced.getResultTable();
    if (table != null) {
      ArrayNode rows = record.putArray("rows");
      for (Object[] row : table.getRows().subList(0, Math.min(broker._resultRows, table.getRows().size()))) {
        rows.add(JsonUtils.objectToJsonNode(row));
      }
    }
  }
}
