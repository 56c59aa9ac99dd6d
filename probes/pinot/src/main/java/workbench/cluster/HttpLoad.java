package workbench.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.Executors;
import org.apache.pinot.spi.utils.JsonUtils;


/**
 * The open-loop load ({@link OpenLoop}) sent to a real broker: each query is one {@code POST /query/sql} to the
 * broker's HTTP port, as Pinot's own clients send it, and its record is the broker's JSON response as Pinot wrote it
 * (every top-level number and flag: {@code requestId}, {@code timeUsedMs}, {@code numServersQueried},
 * {@code numSegmentsPrunedByBroker}, {@code numDocsScanned}, {@code offlineThreadCpuTimeNs}, ...; the result table
 * as its row count) with the client's view beside it: {@code latencyMs} from sending to the whole body received,
 * and {@code sinceArrivalMs} from the query's due time.
 *
 * <p>Usage: {@code HttpLoad SPEC.json OUT.jsonl}. SPEC: {@code brokerUrl} and {@link OpenLoop}'s keys. The warm-up
 * queries go to the broker too (it logs them; their request ids are not in OUT). Prints {@code DONE ...} when all are
 * in.
 */
public final class HttpLoad {
  private HttpLoad() {
  }

  public static void main(String[] args) {
    OpenLoop.main(args, "HttpLoad", HttpLoad::run);
  }


  private static void run(JsonNode spec, File outFile)
      throws Exception {
    OpenLoop load = new OpenLoop(spec);
    URI uri = URI.create(spec.get("brokerUrl").asText() + "/query/sql");
    // The client's own connection pool and threads: a request blocks only its worker, as a client per query would.
    HttpClient client = HttpClient.newBuilder().executor(Executors.newCachedThreadPool())
        .connectTimeout(Duration.ofSeconds(10)).version(HttpClient.Version.HTTP_1_1).build();
    Duration timeout = Duration.ofMillis(load._timeoutMs + 10_000L);
    for (int i = 0; load.warming(i); i++) {
      ObjectNode warm = send(client, uri, timeout, load.warmupSql(i));
      if (warm.withArray("exceptions").size() > 0) {
        throw new IllegalStateException("warm-up query failed: " + warm.get("sql").asText() + ": "
            + warm.get("exceptions"));
      }
    }
    load.settle(index -> () -> send(client, uri, timeout, load.warmupSql(index)));
    load.awaitStartSignal();
    load.run(outFile, index -> () -> send(client, uri, timeout, load._queries.get(index)));
  }

  /** One query's record; never throws (a failed request is a record with an exception). */
  static ObjectNode send(HttpClient client, URI uri, Duration timeout, String sql) {
    ObjectNode record = JsonUtils.newObjectNode();
    record.put("sql", sql);
    ArrayNode exceptions = record.putArray("exceptions");
    long start = System.nanoTime();
    try {
      ObjectNode body = JsonUtils.newObjectNode();
      body.put("sql", sql);
      HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build();
      HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
      record.put("latencyMs", (System.nanoTime() - start) / 1e6);
      record.put("httpStatus", response.statusCode());
      JsonNode answer = JsonUtils.stringToJsonNode(response.body());
      for (Iterator<Map.Entry<String, JsonNode>> it = answer.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> field = it.next();
        JsonNode value = field.getValue();
        if (value.isNumber() || value.isBoolean()) {
          record.set(field.getKey(), value);
        }
      }
      // The broker's request id is a string of a long (BrokerRequestIdGenerator); -1 when it assigned none.
      record.put("requestId", answer.path("requestId").asLong(-1));
      record.put("numRowsResultSet", answer.path("resultTable").path("rows").size());
      for (JsonNode e : answer.path("exceptions")) {
        exceptions.add(e.path("errorCode").asInt() + ": " + e.path("message").asText());
      }
      if (response.statusCode() != 200 && exceptions.size() == 0) {
        exceptions.add("HTTP " + response.statusCode() + ": " + response.body());
      }
    } catch (Exception e) {
      record.put("latencyMs", (System.nanoTime() - start) / 1e6);
      record.put("requestId", -1);
      exceptions.add("client: " + e);
    }
    return record;
  }
}
