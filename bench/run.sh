#!/bin/sh
# Benchmarks the recording proxy and the bundle against baselines measured in
# the same run, and prints one line per figure (go run ./bench/ratios):
#   name  measured median (min-max)  baseline median (min-max)  ratio (min-max)  target  n  result
# The benchmarks of ./bench are built once and run ROUNDS times (default 5,
# at least 5 to be judged), round after round, so in every round each figure
# runs next to its baseline (direct, relay, recorded, then again); each
# figure's ratio is taken round by round and reported as the median with its
# spread. A figure is "ok" only if every round meets its target, "missed" if
# the median round does not, "unsteady" if the median does and the spread
# crosses the target. After the ./bench benchmarks every round runs
# bench/independent once: the proxy's figures again from a client that
# links none of wireproof, through `wireproof record` (and
# httputil.ReverseProxy) run as their own processes. The machine's load
# average is printed before, at every round and after, with the command
# line and commit that made the table. Then bench/replay.sh and bench/s3.sh.
# Exits non-zero unless every figure is ok, and says how long it took.
# Takes about two and a half minutes on two quiet cores (144-151 s at a
# load average of 1-3; 216 s at 6-12): five rounds of the ./bench benchmarks
# at BENCHTIME=1s, the default, which lengthens the b.N benchmarks, and of
# bench/independent, then replay.sh.
set -eu
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
started=$(date +%s)
out=$(mktemp)
bin=$(mktemp -d)
trap 'rm -rf "$out" "$bin"' EXIT
load() { echo "load average ($1): $(cut -d' ' -f1-3 /proc/loadavg)"; }
# What made the table, printed first and again above it, to paste with it.
made="command: ROUNDS=$rounds BENCHTIME=${BENCHTIME:-1s} bash bench/run.sh
commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)'), $(nproc) cores, $(go version | cut -d' ' -f3)"
echo "$made"
load before
before=$(cut -d' ' -f1-3 /proc/loadavg)
# BenchmarkWSBig runs the proxy as `wireproof record`, its own process, to
# measure its peak memory.
go build -o "$bin/wireproof" ./cmd/wireproof
go test -c -o "$bin/bench.test" ./bench/
# The independent client: plain coder/websocket and net/http ends, with
# `wireproof record` and httputil.ReverseProxy each run as its own process.
go build -o "$bin/independent" ./bench/independent
export WIREPROOF_BIN="$bin/wireproof"
# Every benchmark but BenchmarkPerMessage (b.N per message, for profiling).
round_benchmarks='^Benchmark(WS|HTTP|Playback|Redact|Compression)'
status=0
round_loads=""
i=1
while [ "$i" -le "$rounds" ]; do
  echo "== round $i of $rounds ($(load start))"
  round_loads="$round_loads $(cut -d' ' -f1 /proc/loadavg)"
  # A round that fails still leaves its figures; ratios then finds fewer
  # rounds of what failed and says so.
  (cd bench && "$bin/bench.test" -test.run '^$' -test.bench "$round_benchmarks" -test.benchtime "${BENCHTIME:-1s}") | tee -a "$out" || status=$?
  "$bin/independent" -wireproof "$bin/wireproof" | tee -a "$out" || status=$?
  i=$((i + 1))
done
echo
echo "== the table ($rounds rounds; paste it with these lines)"
echo "$made"
echo "load average (1, 5, 15 minutes) before: $before; 1-minute at the start of each round:$round_loads; after the rounds: $(cut -d' ' -f1-3 /proc/loadavg)"
go run ./bench/ratios < "$out" || status=$?
# Replay figures are measured by their own script; a missed proxy target must
# not hide them.
bash bench/replay.sh || status=$?
# Replay from object storage against replay from disk, when an S3 endpoint is
# configured (bash .ci/s3.sh bash bench/run.sh); it says so and skips if not.
bash bench/s3.sh || status=$?
load after
echo "bench/run.sh took $(($(date +%s) - started)) s"
exit $status
