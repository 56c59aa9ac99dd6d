package workbench.cluster;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;


/**
 * How each long-running JVM of the workbench's cluster talks to the workbench (workbench.groundtruth.cluster and
 * helix_cluster wait for its first line): one {@code READY ...} line once it serves, then it runs until SIGTERM,
 * stopping what it started; or one {@code FAILED ...} line and exit status 1.
 */
final class JvmMain {
  /** Something a JVM runs, which may fail to start. */
  interface Body {
    void run()
        throws Exception;
  }

  private JvmMain() {
  }

  /** Pinot config given as {@code KEY=VALUE} arguments, {@code args[from]} on. */
  static Map<String, Object> keyValues(String[] args, int from) {
    Map<String, Object> properties = new HashMap<>();
    for (int i = from; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("config argument not KEY=VALUE: " + args[i]);
      }
      properties.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    return properties;
  }

  /** Run {@code body}; a failure is the FAILED line (what the workbench reports), the trace after it, exit 1. */
  static void main(Body body) {
    try {
      body.run();
    } catch (Throwable t) {
      System.out.println("FAILED " + t);
      System.out.flush();
      t.printStackTrace();
      System.exit(1);
    }
  }

  /** Print {@code ready} and serve until the JVM is asked to stop, running {@code stop} (thread {@code name}) then. */
  static void serve(String ready, String name, Runnable stop)
      throws InterruptedException {
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      stop.run();
      stopped.countDown();
    }, name));
    System.out.println(ready);
    System.out.flush();
    stopped.await();
  }
}
