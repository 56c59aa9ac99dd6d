package workbench.groundtruth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.apache.pinot.spi.utils.JsonUtils;


/**
 * How each ground-truth driver runs (workbench.groundtruth.harness.run_jvm calls them): {@code DRIVER REQUEST.json
 * RESPONSE.json}; the response is written whole or not at all (a temporary file moved into place); a failure is one
 * line on stderr, {@code DRIVER failed: ...}, which the workbench shows, then the trace for the log, and status 1.
 * The JVM exits explicitly: Helix and ZooKeeper leave non-daemon threads behind.
 */
final class DriverMain {
  /** A driver's work: the response to one request. */
  interface Run {
    ObjectNode run(JsonNode request)
        throws Exception;
  }

  private DriverMain() {
  }

  static void main(String driver, String[] args, Run run) {
    if (args.length != 2) {
      System.err.println("usage: " + driver + " REQUEST.json RESPONSE.json");
      System.exit(2);
    }
    int status = 0;
    try {
      ObjectNode response = run.run(JsonUtils.fileToJsonNode(new File(args[0])));
      File out = new File(args[1]);
      File tmp = new File(out.getPath() + ".tmp");
      Files.writeString(tmp.toPath(), JsonUtils.objectToPrettyString(response), StandardCharsets.UTF_8);
      if (!tmp.renameTo(out)) {
        throw new IllegalStateException("cannot move " + tmp + " to " + out);
      }
    } catch (Throwable t) {
      System.err.println(driver + " failed: " + t);
      t.printStackTrace();
      status = 1;
    }
    System.exit(status);
  }
}
