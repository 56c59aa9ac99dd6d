import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A JVM that holds an upsert primary-key map the way a Pinot server does, under query-like garbage,
 * so that its GC log shows how G1 (or ZGC) pauses follow the size of that map.
 *
 * <p>The map is a {@code ConcurrentHashMap} from a primary-key wrapper to a record location, as in
 * Pinot's {@code ConcurrentMapPartitionUpsertMetadataManager}: with {@code hashFunction=NONE} the key
 * is a {@code PrimaryKey} holding an {@code Object[]} of boxed column values; with MD5 it is a
 * {@code ByteArray} holding the 16-byte digest. The value holds a segment reference, an int docId and
 * a boxed comparison value (a {@code Long}). The object layouts are the ones
 * {@code workbench/pinot/heap.py} counts.
 *
 * <p>Phases: load {@code --keys} keys, call {@code System.gc()} once (its log line gives the live heap
 * of the loaded map), then for {@code --seconds} run an updater (random existing keys get a new
 * record location at {@code --update-rate} per second: new young objects referenced from old map
 * nodes, the remembered-set work of an upsert table) and an allocator (query-like garbage at
 * {@code --alloc-mb} MB/s, each chunk kept alive for {@code --lifetime-ms}, the in-flight working
 * set of the queries). Progress goes to stdout; the GC log is whatever {@code -Xlog} says.
 */
public final class UpsertHeapProbe {

    /** Stand-in for Pinot's {@code PrimaryKey}: an {@code Object[]} of column values. */
    static final class PrimaryKey {
        private final Object[] values;

        PrimaryKey(Object[] values) {
            this.values = values;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof PrimaryKey && Arrays.equals(values, ((PrimaryKey) other).values);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(values);
        }
    }

    /** Stand-in for Pinot's {@code ByteArray}: the digest bytes of a hashed primary key. */
    static final class ByteArray {
        private final byte[] bytes;

        ByteArray(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof ByteArray && Arrays.equals(bytes, ((ByteArray) other).bytes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bytes);
        }
    }

    /** Stand-in for an {@code IndexSegment}: a few long-lived objects the locations point at. */
    static final class Segment {
        final String name;

        Segment(String name) {
            this.name = name;
        }
    }

    /** Pinot's {@code RecordLocation}: segment, docId and the boxed comparison value. */
    static final class RecordLocation {
        final Segment segment;
        final int docId;
        final Comparable<?> comparisonValue;

        RecordLocation(Segment segment, int docId, Comparable<?> comparisonValue) {
            this.segment = segment;
            this.docId = docId;
            this.comparisonValue = comparisonValue;
        }
    }

    private static final int TICK_MS = 10;

    private final ConcurrentHashMap<Object, RecordLocation> map = new ConcurrentHashMap<>();
    private final String hash;
    private volatile Segment consuming = new Segment("seg__0");
    private final AtomicLong updates = new AtomicLong();
    private final AtomicLong allocated = new AtomicLong();

    private UpsertHeapProbe(String hash) {
        this.hash = hash;
    }

    private Object key(long id) {
        if (hash.equals("NONE")) {
            return new PrimaryKey(new Object[] {Long.valueOf(id)});
        }
        try {
            byte[] raw = ByteBuffer.allocate(Long.BYTES).putLong(id).array();
            return new ByteArray(MessageDigest.getInstance("MD5").digest(raw));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private void upsert(long id, int docId) {
        RecordLocation location = new RecordLocation(consuming, docId, Long.valueOf(System.nanoTime()));
        map.compute(key(id), (k, current) -> location);
    }

    private void load(long keys) {
        for (long id = 0; id < keys; id++) {
            upsert(id, (int) (id % 1_000_000));
            if (id % 1_000_000 == 0) {
                consuming = new Segment("seg__" + id / 1_000_000);
            }
        }
    }

    /** Update random existing keys at {@code rate} per second until {@code endNanos}. */
    private void updater(long keys, double rate, long endNanos) {
        double perTick = rate * TICK_MS / 1000.0;
        double owed = 0;
        int docId = 0;
        long next = System.nanoTime();
        while (next < endNanos) {
            owed += perTick;
            ThreadLocalRandom random = ThreadLocalRandom.current();
            long done = 0;
            for (; owed >= 1; owed--) {
                upsert(random.nextLong(keys), docId++);
                done++;
            }
            updates.addAndGet(done);
            if (docId > 1_000_000) {
                consuming = new Segment("seg__u" + updates.get());
                docId = 0;
            }
            next = pace(next);
        }
    }

    /** Allocate {@code mbPerSecond} of 8 KiB chunks, each kept alive for {@code lifetimeMs}. */
    private void allocator(double mbPerSecond, int lifetimeMs, long endNanos) {
        int chunk = 8 * 1024;
        double perTick = mbPerSecond * 1024 * 1024 * TICK_MS / 1000.0 / chunk;
        int slots = Math.max(1, (int) Math.ceil(perTick * Math.max(lifetimeMs, TICK_MS) / TICK_MS));
        long[][] ring = new long[slots][];
        int position = 0;
        double owed = 0;
        long next = System.nanoTime();
        while (next < endNanos) {
            owed += perTick;
            for (; owed >= 1; owed--) {
                long[] block = new long[chunk / Long.BYTES - 2];  // 8 KiB with the array header
                block[0] = position;
                ring[position] = block;
                position = (position + 1) % slots;
                allocated.addAndGet(chunk);
            }
            next = pace(next);
        }
    }

    private static long pace(long next) {
        long target = next + TICK_MS * 1_000_000L;
        long wait = target - System.nanoTime();
        if (wait > 0) {
            try {
                Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return target;
    }

    private static String arg(String[] args, String name, String fallback) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals(name)) {
                return args[i + 1];
            }
        }
        return fallback;
    }

    public static void main(String[] args) throws InterruptedException {
        long keys = Long.parseLong(arg(args, "--keys", "2000000"));
        double updateRate = Double.parseDouble(arg(args, "--update-rate", "50000"));
        double allocMb = Double.parseDouble(arg(args, "--alloc-mb", "300"));
        int lifetimeMs = Integer.parseInt(arg(args, "--lifetime-ms", "100"));
        int seconds = Integer.parseInt(arg(args, "--seconds", "90"));
        String hash = arg(args, "--hash", "NONE").toUpperCase(Locale.ROOT);
        if (!hash.equals("NONE") && !hash.equals("MD5")) {
            throw new IllegalArgumentException("--hash must be NONE or MD5, got " + hash);
        }
        UpsertHeapProbe probe = new UpsertHeapProbe(hash);
        long t0 = System.nanoTime();
        probe.load(keys);
        System.out.printf(Locale.ROOT, "loaded %d keys (%s) in %.1f s%n", keys, hash, (System.nanoTime() - t0) / 1e9);
        System.gc();  // the log's Pause Full (System.gc()) gives the live heap of the loaded map
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        Thread updater = new Thread(() -> probe.updater(keys, updateRate, end), "updater");
        Thread allocator = new Thread(() -> probe.allocator(allocMb, lifetimeMs, end), "allocator");
        long start = System.nanoTime();
        updater.start();
        allocator.start();
        for (Thread worker : new Thread[] {updater, allocator}) {
            while (worker.isAlive()) {
                worker.join(10_000);
                if (worker.isAlive()) {
                    probe.report("progress", start);
                }
            }
        }
        System.out.printf(Locale.ROOT, "done: %d keys%n", probe.map.size());
        probe.report("achieved", start);
    }

    /** Achieved rates since {@code start}: the rates the run really drove (threads share 2 cores with GC). */
    private void report(String what, long start) {
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf(Locale.ROOT, "%s: %.1f s, %d updates (%.0f/s), %.0f MB allocated (%.1f MB/s)%n", what,
                          seconds, updates.get(), updates.get() / seconds, allocated.get() / 1048576.0,
                          allocated.get() / 1048576.0 / seconds);
    }
}
