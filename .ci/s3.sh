#!/usr/bin/env bash
# A real S3-compatible server on loopback for the object-storage tests and the
# bench: versitygw (Apache-2.0) with its posix backend, built once from its Go
# module and cached under ${XDG_CACHE_HOME:-$HOME/.cache}/wireproof/.
#
#   bash .ci/s3.sh go test -race ./internal/objstore   run a command with the server up
#   source .ci/s3.sh && s3_start                         (what .ci/run does) start it,
#       export AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
#       AWS_REGION and WIREPROOF_TEST_S3_BUCKET, and stop it when the shell exits
#
# The credentials are generated for each start and never printed.

S3_VERSITYGW_VERSION=v1.8.0
S3_BUCKET=wireproof-test

# s3_binary prints the cached server binary's path, building it first if needed.
s3_binary() {
  local dir="${XDG_CACHE_HOME:-$HOME/.cache}/wireproof/versitygw-$S3_VERSITYGW_VERSION"
  if [ ! -x "$dir/versitygw" ]; then
    echo "s3.sh: building versitygw $S3_VERSITYGW_VERSION (once; cached in $dir)" >&2
    mkdir -p "$dir"
    GOBIN="$dir" GOFLAGS=-mod=mod go install "github.com/versity/versitygw/cmd/versitygw@$S3_VERSITYGW_VERSION" >&2 || return 1
  fi
  echo "$dir/versitygw"
}

s3_stop() {
  if [ -n "${S3_PID:-}" ]; then
    kill "$S3_PID" 2>/dev/null || true
    wait "$S3_PID" 2>/dev/null || true
    S3_PID=
  fi
  [ -n "${S3_DIR:-}" ] && rm -rf "$S3_DIR"
  S3_DIR=
}

s3_start() {
  local bin port i
  bin=$(s3_binary) || { echo "s3.sh: could not build versitygw" >&2; return 1; }
  S3_DIR=$(mktemp -d)
  mkdir -p "$S3_DIR/data" "$S3_DIR/iam"
  local key secret
  key=wp$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
  secret=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')
  for i in 1 2 3 4 5; do
    port=$((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 20000))
    ROOT_ACCESS_KEY_ID="$key" ROOT_SECRET_ACCESS_KEY="$secret" \
      "$bin" --port "127.0.0.1:$port" --quiet --health /health --iam-dir "$S3_DIR/iam" \
      posix "$S3_DIR/data" >"$S3_DIR/log" 2>&1 &
    S3_PID=$!
    trap s3_stop EXIT
    local up=
    for _ in $(seq 1 100); do
      if curl -sf -o /dev/null "http://127.0.0.1:$port/health"; then up=1; break; fi
      kill -0 "$S3_PID" 2>/dev/null || break
      sleep 0.1
    done
    [ -n "$up" ] && break
    kill "$S3_PID" 2>/dev/null || true; wait "$S3_PID" 2>/dev/null || true; S3_PID=
  done
  if [ -z "${S3_PID:-}" ]; then
    echo "s3.sh: versitygw did not start; its log:" >&2
    cat "$S3_DIR/log" >&2
    return 1
  fi
  # Create the test bucket (a signed PUT; the empty body's SHA-256).
  if ! curl -sf -o /dev/null --aws-sigv4 "aws:amz:us-east-1:s3" --user "$key:$secret" \
    -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
    -X PUT "http://127.0.0.1:$port/$S3_BUCKET"; then
    echo "s3.sh: could not create bucket $S3_BUCKET" >&2
    return 1
  fi
  export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID="$key" \
    AWS_SECRET_ACCESS_KEY="$secret" AWS_REGION=us-east-1 WIREPROOF_TEST_S3_BUCKET="$S3_BUCKET"
  unset AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL_S3
  echo "s3.sh: versitygw on $AWS_ENDPOINT_URL, bucket $S3_BUCKET" >&2
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  [ $# -gt 0 ] || { sed -n '2,12p' "$0"; exit 2; }
  s3_start
  "$@"
fi
