#!/usr/bin/env bash
# Replay benchmark: throughput (MB/s of uncompressed bundle, all checks on) of a
# projection-heavy bundle, and peak RSS replaying a bundle of at least 500 MB
# uncompressed. The bundles are generated into a temp dir, never committed.
# Targets: >= 150 MB/s on two cores; peak RSS < 100 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/wireproof" ./cmd/wireproof
go build -o "$tmp/gensynth" ./replay/synth/cmd/gensynth

echo "== replay: Go benchmarks"
go test -run '^$' -bench . -benchtime "${BENCHTIME:-1s}" ./replay/ | grep -E '^Benchmark|ok'

echo "== replay: large bundle (${POLLS:=6000} polls x 40 items x 2000 bytes)"
size=$("$tmp/gensynth" -scenario idle -polls "$POLLS" -filler 40 -filler-bytes 2000 -o "$tmp/big.zst")
echo "uncompressed: $((size / 1000000)) MB, compressed: $(( $(stat -c %s "$tmp/big.zst") / 1000000 )) MB"
/usr/bin/time -f '%e %M' -o "$tmp/time" "$tmp/wireproof" replay "$tmp/big.zst" >/dev/null || true
read -r secs rss_kb < "$tmp/time"
awk -v s="$size" -v t="$secs" -v r="$rss_kb" 'BEGIN {
  mbps = (t > 0) ? s / 1e6 / t : 0
  printf "throughput: %.0f MB/s (target >= 150 MB/s)\n", mbps
  printf "peak RSS:   %.0f MB (target < 100 MB)\n", r / 1024
}'
