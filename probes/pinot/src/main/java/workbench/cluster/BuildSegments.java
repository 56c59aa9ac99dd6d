package workbench.cluster;

import java.io.File;
import org.apache.pinot.spi.config.table.TableConfig;
import org.apache.pinot.spi.data.Schema;
import org.apache.pinot.spi.utils.JsonUtils;
import workbench.groundtruth.PinotParts;


/**
 * Builds segments with Pinot's segment creator into one directory, for {@link PinotServer}s to load.
 *
 * <p>Usage: {@code BuildSegments TABLE_CONFIG.json SCHEMA.json OUT_DIR NAME=ROWS.jsonl...}. Each segment is made by
 * the same code as the single-process driver's ({@link PinotParts#createSegment}), so a cluster run and a driver run
 * scan the same segments. Prints {@code BUILT name} per segment.
 */
public final class BuildSegments {
  private BuildSegments() {
  }

  public static void main(String[] args) {
    int status = 0;
    try {
      if (args.length < 3) {
        throw new IllegalArgumentException("usage: BuildSegments TABLE_CONFIG.json SCHEMA.json OUT_DIR NAME=ROWS.jsonl...");
      }
      TableConfig tableConfig = JsonUtils.fileToObject(new File(args[0]), TableConfig.class);
      Schema schema = Schema.fromFile(new File(args[1]));
      File out = new File(args[2]);
      if (!out.isDirectory() && !out.mkdirs()) {
        throw new IllegalStateException("cannot create " + out);
      }
      for (int i = 3; i < args.length; i++) {
        int eq = args[i].indexOf('=');
        if (eq <= 0) {
          throw new IllegalArgumentException("segment argument not NAME=ROWS.jsonl: " + args[i]);
        }
        String name = args[i].substring(0, eq);
        PinotParts.createSegment(tableConfig, schema, name, new File(args[i].substring(eq + 1)), out);
        System.out.println("BUILT " + name);
      }
    } catch (Throwable t) {
      System.err.println("BuildSegments failed: " + t);
      t.printStackTrace();
      status = 1;
    }
    System.exit(status);
  }
}
