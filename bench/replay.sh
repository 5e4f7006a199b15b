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

echo "== replay: where the CPU time goes (pprof, cumulative, BenchmarkReplayFile)"
go test -run '^$' -bench 'BenchmarkReplayFile$' -benchtime 40x -cpuprofile "$tmp/cpu.out" -o "$tmp/replay.test" ./replay/ >/dev/null
go tool pprof -top -cum -nodecount 60 "$tmp/replay.test" "$tmp/cpu.out" 2>/dev/null |
  grep -E 'bundle\.\(\*Reader\)\.Next|zstd\.\(\*Decoder\)\.Read|bundle\.\(\*lineDecoder\)\.decode|replay\.\(\*Engine\)\.Feed|replay\.\(\*Correlator\)\.decode|leanDecoder\)\.projection|replay\.\(\*conformance\)|protocol\.' |
  awk '{printf "  %-7s %-7s %s\n", $4, $5, $6}' || true

echo "== replay: large bundle (${POLLS:=6000} polls x 40 items x 2000 bytes)"
size=$("$tmp/gensynth" -scenario idle -polls "$POLLS" -filler 40 -filler-bytes 2000 -o "$tmp/big.zst")
echo "uncompressed: $((size / 1000000)) MB, compressed: $(( $(stat -c %s "$tmp/big.zst") / 1000 )) kB"
/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$tmp/wireproof" replay "$tmp/big.zst" >/dev/null || true
read -r secs user sys rss_kb < "$tmp/time"
# CPU seconds are printed too: on a shared machine they vary far less than
# the wall clock, which is what the target is about.
awk -v s="$size" -v t="$secs" -v u="$user" -v k="$sys" -v r="$rss_kb" 'BEGIN {
  mbps = (t > 0) ? s / 1e6 / t : 0
  cpu = u + k
  printf "throughput: %.0f MB/s (target >= 150 MB/s); %.2f s wall, %.2f s CPU (%.0f MB per CPU second)\n", mbps, t, cpu, (cpu > 0) ? s / 1e6 / cpu : 0
  printf "peak RSS:   %.0f MB (target < 100 MB)\n", r / 1024
}'
