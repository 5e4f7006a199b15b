#!/bin/sh
# Benchmarks the recording proxy and the bundle against baselines measured in
# the same run, and prints one line per figure:
#   name  measured  baseline  ratio  target  ok|below|above
# Exits non-zero if a figure misses its target. Takes two to four minutes on
# two cores. The throughput and latency benchmarks alternate their ways in
# rounds and report medians; BENCHTIME (default 1s) lengthens the others.
set -eu
cd "$(dirname "$0")/.."
out=$(mktemp)
bin=$(mktemp -d)
trap 'rm -rf "$out" "$bin"' EXIT
# BenchmarkWSBig runs the proxy as `wireproof record`, its own process, to
# measure its peak memory.
go build -o "$bin/wireproof" ./cmd/wireproof
export WIREPROOF_BIN="$bin/wireproof"
go test -run '^$' -bench . -benchtime "${BENCHTIME:-1s}" ./bench/ | tee "$out"
echo
status=0
go run ./bench/ratios < "$out" || status=$?
# Replay figures are measured by their own script; a missed proxy target must
# not hide them.
bash bench/replay.sh || status=$?
# Replay from object storage against replay from disk, when an S3 endpoint is
# configured (bash .ci/s3.sh bash bench/run.sh); it says so and skips if not.
bash bench/s3.sh || status=$?
exit $status
