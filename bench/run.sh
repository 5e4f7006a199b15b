#!/bin/sh
# Benchmarks the recording proxy and the bundle against baselines measured in
# the same run, and prints one line per figure:
#   name  measured  baseline  ratio  target  ok|below
# Exits non-zero if a figure is below its target. Takes about a minute on two
# cores. BENCHTIME (default 1s) trades time for steadier figures.
set -eu
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -run '^$' -bench . -benchtime "${BENCHTIME:-1s}" ./bench/ | tee "$out"
echo
status=0
go run ./bench/ratios < "$out" || status=$?
# Replay figures are measured by their own script; a missed proxy target must
# not hide them.
bash bench/replay.sh || status=$?
exit $status
