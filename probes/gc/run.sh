#!/usr/bin/env bash
# Run UpsertHeapProbe over a grid of key counts and heaps and keep each GC log (see README.md).
# Settings come from the environment; the defaults are the runs behind tests/fixtures/gc/.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${OUT:-data/interim/gc-probe}"
JAVA="${JAVA:-java}"
JAVAC="${JAVAC:-javac}"
COLLECTOR="${COLLECTOR:-g1}"              # g1 or zgc (generational ZGC needs JDK 21: set JAVA)
KEYS="${KEYS:-2000000 8000000 20000000}"
HEAPS="${HEAPS:-4g 6g}"
SECONDS_PER_RUN="${SECONDS_PER_RUN:-75}"
UPDATE_RATE="${UPDATE_RATE:-50000}"       # map updates per second (random existing keys)
ALLOC_MB="${ALLOC_MB:-300}"               # query-like garbage, MB/s
LIFETIME_MS="${LIFETIME_MS:-100}"         # how long each garbage chunk stays reachable
HASH="${HASH:-NONE}"                      # NONE (PrimaryKey) or MD5 (ByteArray digest)

mkdir -p "$OUT/classes"
"$JAVAC" -d "$OUT/classes" "$HERE/UpsertHeapProbe.java"
case "$COLLECTOR" in
  g1) GC_FLAGS=(-XX:+UseG1GC) ;;
  zgc) GC_FLAGS=(-XX:+UseZGC -XX:+ZGenerational) ;;
  *) echo "COLLECTOR must be g1 or zgc, got $COLLECTOR" >&2; exit 2 ;;
esac
"$JAVA" -version 2>&1 | head -1
for heap in $HEAPS; do
  for keys in $KEYS; do
    if (( keys % 1000000 == 0 )); then count="$((keys / 1000000))m"; else count="$((keys / 1000))k"; fi
    name="$COLLECTOR-$HASH-$count-$heap"
    log="$OUT/$name.log"
    echo "== $name"
    echo "loadavg before: $(cat /proc/loadavg 2>/dev/null || echo n/a)"
    "$JAVA" "-Xms$heap" "-Xmx$heap" "${GC_FLAGS[@]}" \
      "-Xlog:gc*,gc+heap=debug,gc+phases=debug:file=$log:time,uptime,level,tags" \
      -cp "$OUT/classes" UpsertHeapProbe --keys "$keys" --update-rate "$UPDATE_RATE" --alloc-mb "$ALLOC_MB" \
      --lifetime-ms "$LIFETIME_MS" --seconds "$SECONDS_PER_RUN" --hash "$HASH" || echo "   (exit status $?)"
    echo "loadavg after: $(cat /proc/loadavg 2>/dev/null || echo n/a)"
    python3 "$HERE/trim.py" "$log" "$log.gz"
  done
done
