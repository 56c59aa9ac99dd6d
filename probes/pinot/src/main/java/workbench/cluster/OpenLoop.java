package workbench.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.apache.pinot.spi.utils.JsonUtils;


/**
 * The open-loop load both load generators send: Poisson arrivals at {@code ratePerSecond} from
 * {@code Random(seed)}, or the given {@code arrivals} (a file of one time in seconds per query: a workload replayed at
 * its own times), the queries used in turn, each handed to a worker pool at its due time, never waiting for
 * earlier queries. {@link LoadGenerator} runs each query through its in-process broker; {@link HttpLoad} sends it to a
 * real broker's {@code /query/sql}. Same spec keys, same seed: same arrival times and the same SQL at each.
 *
 * <p>Each record says how late its hand-off was ({@code dispatchLagMs}: the scheduler thread fell behind) and how long
 * it waited for a worker ({@code startLagMs}), so a run where the generator, not Pinot, was the bottleneck can be seen
 * and discarded; {@code sinceArrivalMs} is the query's latency from its due time, as its client would see it.
 */
final class OpenLoop {
  /** The load: {@code ratePerSecond}, {@code seed}, {@code numQueries} and/or {@code durationS}, {@code timeoutMs},
   * {@code threads}, {@code warmupQueries}, {@code settleSignal}, {@code startSignal}, and the SQL of {@code queries}
   * (one per line). */
  final List<String> _queries = new ArrayList<>();
  final double _rate;
  final long _seed;
  final int _numQueries;
  final double _durationS;
  final long _timeoutMs;
  final int _threads;
  final int _warmup;
  /** With it, the warm-up goes on past {@code warmupQueries}, at the run's own rate, until this file appears: the
   * harness makes it once the servers' JIT compilers have gone quiet, so the measured run meets no compilation. */
  final File _settleSignal;
  final File _startSignal;
  /** Given arrival times (s from the run's start, one per query in the queries' order), or null: Poisson. */
  final List<Double> _arrivals;

  /**
   * One query's work, made on the scheduler thread at its due time (so anything it numbers, a request id, follows
   * the arrival order) and run on a worker; the work never throws (an error is its record's exception).
   */
  interface Dispatch {
    Supplier<ObjectNode> at(int index);
  }

  OpenLoop(JsonNode spec)
      throws IOException {
    for (String line : Files.readAllLines(new File(spec.get("queries").asText()).toPath())) {
      if (!line.isBlank()) {
        _queries.add(line.trim());
      }
    }
    if (_queries.isEmpty()) {
      throw new IllegalArgumentException("no queries in " + spec.get("queries").asText());
    }
    _rate = spec.get("ratePerSecond").asDouble();
    _seed = spec.path("seed").asLong(0);
    _numQueries = spec.path("numQueries").asInt(Integer.MAX_VALUE);
    _durationS = spec.path("durationS").asDouble(Double.POSITIVE_INFINITY);
    _timeoutMs = spec.path("timeoutMs").asLong(10_000L);
    _threads = spec.path("threads").asInt(64);
    _warmup = spec.path("warmupQueries").asInt(0);
    _startSignal = spec.hasNonNull("startSignal") ? new File(spec.get("startSignal").asText()) : null;
    _settleSignal = spec.hasNonNull("settleSignal") ? new File(spec.get("settleSignal").asText()) : null;
    if (spec.hasNonNull("arrivals")) {
      _arrivals = new ArrayList<>();
      for (String line : Files.readAllLines(new File(spec.get("arrivals").asText()).toPath())) {
        if (!line.isBlank()) {
          _arrivals.add(Double.parseDouble(line.trim()));
        }
      }
      if (_arrivals.size() != _queries.size()) {
        throw new IllegalArgumentException("arrivals: " + _arrivals.size() + " times for " + _queries.size()
            + " queries");
      }
    } else {
      _arrivals = null;
    }
    if ((_arrivals == null && !(_rate > 0)) || (_numQueries == Integer.MAX_VALUE && Double.isInfinite(_durationS)
        && _arrivals == null)) {
      throw new IllegalArgumentException("need ratePerSecond > 0 (or arrivals) and numQueries or durationS");
    }
  }

  /** What a load generator runs: its spec, and the file its records go to. */
  interface Main {
    void run(JsonNode spec, File out)
        throws Exception;
  }

  /**
   * A load generator's main ({@code NAME SPEC.json OUT.jsonl}): a failure is the {@code FAILED} line, its trace and
   * exit status 1; the JVM exits when the load is done either way (Netty's event loops are non-daemon).
   */
  static void main(String[] args, String name, Main main) {
    int status = 0;
    try {
      if (args.length != 2) {
        throw new IllegalArgumentException("usage: " + name + " SPEC.json OUT.jsonl");
      }
      main.run(JsonUtils.fileToJsonNode(new File(args[0])), new File(args[1]));
    } catch (Throwable t) {
      System.out.println("FAILED " + t);
      t.printStackTrace();
      status = 1;
    }
    System.out.flush();
    System.exit(status);
  }

  /** Whether the i-th of the first warm-up queries runs: {@code warmupQueries} of them, one at a time. */
  boolean warming(int i) {
    return i < _warmup;
  }

  /**
   * The rest of the warm-up, after the first {@code warmupQueries}: with a {@code settleSignal}, queries at the
   * measured run's own rate, open-loop (Poisson from another seed; a replay's mean rate), until the signal's file
   * appears, then waits for those in flight. Says {@code WARMED n} as it starts (the harness judges the compilers
   * from then on) and {@code WARMUP n} with the number run in all.
   *
   * <p>Why at the run's rate and not one at a time: on one core, Apache Pinot 1.5.1's C2 compiler went quiet under
   * the one-at-a-time warm-up and then compiled again in bursts of 100-380 ms per second through a measured run at
   * 80% of capacity (queries in flight together, a queue in the scheduler: code the warm-up had not run), a
   * compilation a server serving that load has long finished, and the queue it made doubled the run's p99.
   */
  void settle(Dispatch dispatch)
      throws InterruptedException {
    int sent = 0;
    if (_settleSignal != null) {
      System.out.println("WARMED " + _warmup);
      System.out.flush();
      ExecutorService workers = Executors.newFixedThreadPool(_threads);
      try {
        Random random = new Random(_seed + 1);
        double rate = _arrivals == null ? _rate
            : _arrivals.size() / Math.max(_arrivals.get(_arrivals.size() - 1), 1e-3);
        long t0 = System.nanoTime();
        double atS = 0;
        while (!_settleSignal.exists()) {
          atS -= Math.log(1.0 - random.nextDouble()) / rate;
          long due = t0 + (long) (atS * 1e9);
          long now;
          // the signal is looked for every 5 ms: at a low rate the next arrival may be seconds away
          while ((now = System.nanoTime()) < due && !_settleSignal.exists()) {
            LockSupport.parkNanos(Math.min(due - now, 5_000_000L));
          }
          if (now < due) {
            break;
          }
          Supplier<ObjectNode> work = dispatch.at((_warmup + sent) % _queries.size());
          workers.execute(work::get);
          sent++;
        }
        workers.shutdown();
        if (!workers.awaitTermination(_timeoutMs + 60_000L, TimeUnit.MILLISECONDS)) {
          throw new IllegalStateException("warm-up queries still running " + (_timeoutMs + 60_000L)
              + " ms after the last");
        }
      } finally {
        workers.shutdownNow();
      }
    }
    System.out.println("WARMUP " + (_warmup + sent));
    System.out.flush();
  }

  /** The i-th warm-up query's SQL (the first ones run one at a time before the measured run, in the same rotation). */
  String warmupSql(int i) {
    return _queries.get(i % _queries.size());
  }

  /**
   * With a {@code startSignal}, say {@code WARM} and wait for the file: someone acts between the warm-up and the
   * measured run (a slow server's CPU limit is applied now, so the warm-up reached a warm server).
   */
  void awaitStartSignal()
      throws InterruptedException {
    if (_startSignal == null) {
      return;
    }
    System.out.println("WARM");
    System.out.flush();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!_startSignal.exists()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("no start signal at " + _startSignal + " within 60 s of the warm-up's end");
      }
      Thread.sleep(5);
    }
  }

  /**
   * Run the measured load: one JSON line per query in {@code outFile} as it completes, {@code DONE sent=...
   * withExceptions=... maxDispatchLagMs=... startEpochMs=... cpuMs=... wallMs=...} on stdout once all are in
   * ({@code cpuMs}: this JVM's CPU over the measured run, {@code wallMs} the run's length: whether the load
   * generator's own cores were the bottleneck).
   */
  void run(File outFile, Dispatch dispatch)
      throws Exception {
    ExecutorService workers = Executors.newFixedThreadPool(_threads);
    AtomicInteger failures = new AtomicInteger();
    int sent = 0;
    double maxDispatchLagMs = 0;
    try (BufferedWriter out = Files.newBufferedWriter(outFile.toPath(), StandardCharsets.UTF_8)) {
      Random random = new Random(_seed);
      long cpu0 = processCpuNs();
      long t0 = System.nanoTime();
      long startEpochMs = System.currentTimeMillis();
      double arrivalS = 0;
      int count = _arrivals == null ? _numQueries : Math.min(_numQueries, _arrivals.size());
      for (int i = 0; i < count; i++) {
        arrivalS = _arrivals == null ? arrivalS - Math.log(1.0 - random.nextDouble()) / _rate : _arrivals.get(i);
        if (arrivalS > _durationS) {
          break;
        }
        long due = t0 + (long) (arrivalS * 1e9);
        long now;
        while ((now = System.nanoTime()) < due) {
          LockSupport.parkNanos(due - now);
        }
        double dispatchLagMs = (now - due) / 1e6;
        maxDispatchLagMs = Math.max(maxDispatchLagMs, dispatchLagMs);
        int index = i % _queries.size();
        double arrival = arrivalS;
        Supplier<ObjectNode> work = dispatch.at(index);
        workers.execute(() -> {
          long start = System.nanoTime();
          ObjectNode record = work.get();
          record.put("queryIndex", index);
          record.put("arrivalS", arrival);
          record.put("dispatchLagMs", dispatchLagMs);
          record.put("startLagMs", (start - due) / 1e6);
          record.put("sinceArrivalMs", (System.nanoTime() - due) / 1e6);
          if (record.withArray("exceptions").size() > 0) {
            failures.incrementAndGet();
          }
          write(out, record);
        });
        sent++;
      }
      workers.shutdown();
      if (!workers.awaitTermination(_timeoutMs + 60_000L, TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("queries still running " + (_timeoutMs + 60_000L) + " ms after the last");
      }
      System.out.println("DONE sent=" + sent + " withExceptions=" + failures.get() + " maxDispatchLagMs="
          + String.format("%.3f", maxDispatchLagMs) + " startEpochMs=" + startEpochMs + " cpuMs="
          + String.format("%.1f", (processCpuNs() - cpu0) / 1e6) + " wallMs="
          + String.format("%.1f", (System.nanoTime() - t0) / 1e6));
    } finally {
      workers.shutdownNow();
    }
  }

  /** This JVM's CPU time so far, ns (-1 where the JVM does not say). */
  private static long processCpuNs() {
    java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean
        ? ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime() : -1L;
  }

  private static void write(BufferedWriter out, ObjectNode record) {
    synchronized (out) {
      try {
        out.write(record.toString());
        out.newLine();
        out.flush();
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    }
  }
}
