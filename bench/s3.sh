#!/usr/bin/env bash
# Object-storage replay: throughput (MB/s of uncompressed bundle, all checks on)
# of one corpus replayed from an S3-compatible bucket, against the same corpus
# replayed from local disk in the same run (ratio = bucket / disk), and the
# peak RSS of the bucket replay (objects are streamed, never downloaded whole).
# Needs AWS_ENDPOINT_URL, credentials and WIREPROOF_TEST_S3_BUCKET, as
# `bash .ci/s3.sh bash bench/s3.sh` sets them; without them it says so and
# skips. The corpus: the golden bundles four times over (many small objects,
# where a request's cost shows) and BUNDLES (default 16) synthetic ones of
# POLLS (default 300) observations (where the replay's does).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${AWS_ENDPOINT_URL:-}" ] || [ -z "${WIREPROOF_TEST_S3_BUCKET:-}" ]; then
  echo "== replay from object storage: skipped, no S3 endpoint (run: bash .ci/s3.sh bash bench/run.sh)"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/wireproof" ./cmd/wireproof
go build -o "$tmp/gensynth" ./replay/synth/cmd/gensynth
export WIREPROOF_SPOOL="$tmp/spool"

mkdir "$tmp/corpus"
for i in 1 2 3 4; do
  mkdir "$tmp/corpus/golden$i"
  cp fixtures/golden/*.zst fixtures/golden/live/*.zst "$tmp/corpus/golden$i/" 2>/dev/null || cp fixtures/golden/*.zst "$tmp/corpus/golden$i/"
done
scenarios=(idle active native nested)
for i in $(seq 1 "${BUNDLES:-16}"); do
  sc=${scenarios[$((i % 4))]}
  "$tmp/gensynth" -scenario "$sc" -polls "${POLLS:-300}" -filler 20 -filler-bytes 1000 -o "$tmp/corpus/$sc-$i.zst" >/dev/null
done
n=$(find "$tmp/corpus" -name '*.zst' | wc -l)
# Uncompressed bytes, as the index counts them.
total=$("$tmp/wireproof" index "$tmp/corpus" 2>/dev/null | awk -F'"bytes":' '{ split($2, a, ","); t += a[1] } END { printf "%d", t }')
prefix="s3://$WIREPROOF_TEST_S3_BUCKET/bench-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')/"
echo "== replay from object storage: $n bundles, $((total / 1000000)) MB uncompressed, $(( $(du -sk "$tmp/corpus" | cut -f1) / 1000 )) MB stored, at $AWS_ENDPOINT_URL"
"$tmp/wireproof" upload "$tmp/corpus" "$prefix" >/dev/null

run() { # run NAME ARG: replay ARG, print "NAME secs rss_kb"
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$tmp/wireproof" replay --json "$2" >"$tmp/$1.out" 2>/dev/null || true
  if [ "$(wc -l < "$tmp/$1.out")" != "$n" ]; then
    echo "replay of $2 did not replay $n bundles" >&2
    exit 1
  fi
  read -r secs rss < <(tail -n 1 "$tmp/time") # time says first when the exit status is not 0
  echo "$1 $secs $rss"
}
# Warm the page cache and the server once, then take each figure.
run warm "$tmp/corpus" >/dev/null
read -r _ dsecs drss < <(run disk "$tmp/corpus")
read -r _ ssecs srss < <(run bucket "$prefix")
awk -v s="$total" -v d="$dsecs" -v b="$ssecs" -v dr="$drss" -v br="$srss" 'BEGIN {
  dm = (d > 0) ? s / 1e6 / d : 0; bm = (b > 0) ? s / 1e6 / b : 0
  printf "disk:   %.0f MB/s (%.2f s, peak RSS %.0f MB)\n", dm, d, dr / 1024
  printf "bucket: %.0f MB/s (%.2f s, peak RSS %.0f MB)\n", bm, b, br / 1024
  printf "ratio bucket/disk: %.2f (target >= 0.5; peak RSS target < 200 MB)\n", (dm > 0) ? bm / dm : 0
  exit !(dm > 0 && bm / dm >= 0.5 && br / 1024 < 200)
}'
