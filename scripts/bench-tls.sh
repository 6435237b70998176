#!/usr/bin/env bash
# TLS cost: acknowledged submits per second and latency, with and without TLS, on one replica and
# on a group of three (one machine), and heartbeats of 10,000 simulated agents at 1/s over HTTPS
# and plain HTTP. "Without TLS" is --insecure (plain API, plain Raft); "with TLS" is --tls (HTTPS
# with the replica certificate, mutual TLS on Raft). Each server gets a discarded warm-up run.
# Usage: scripts/bench-tls.sh [runs=3]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
runs="${1:-3}"
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
./kairos --version >/dev/null   # build once, before any timing

ready() {  # url
  for _ in $(seq 1 120); do
    curl -skf -m 1 "$1/readyz" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "bench: $1 did not become ready" >&2
  return 1
}

submit() {  # label, data dir, url, bench args...
  local label="$1" data="$2" url="$3"
  shift 3
  echo "== $label: kairos bench submit $*"
  local ca=(); [ -f "$data/ca.pem" ] && ca=(--ca "$data/ca.pem")
  KAIROS_TOKEN="$(cat "$data/admin.token")" \
    ./kairos bench submit --server "$url" "${ca[@]}" "$@" | grep -E "rate|latency|errors"
}

for mode in insecure tls; do
  scheme=http; [ "$mode" = tls ] && scheme=https
  echo "### one replica, --$mode"
  ./kairos server --"$mode" --data "$work/one-$mode" --listen 127.0.0.1:18500 >"$work/one-$mode.log" 2>&1 &
  pids+=($!)
  ready "$scheme://127.0.0.1:18500"
  submit "warm-up (discarded)" "$work/one-$mode" "$scheme://127.0.0.1:18500" --duration 20 --concurrency 64 >/dev/null
  for i in $(seq 1 "$runs"); do
    submit "closed loop, run $i" "$work/one-$mode" "$scheme://127.0.0.1:18500" --duration 10 --concurrency 64
  done
  kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true

  echo "### three replicas (one machine), --$mode"
  peers=127.0.0.1:18600,127.0.0.1:18601,127.0.0.1:18602
  ./kairos tls create-ca --out "$work/ca-$mode" >/dev/null 2>&1
  for i in 0 1 2; do
    ca=(); [ "$mode" = tls ] && ca=(--ca-from "$work/ca-$mode")
    ./kairos server --"$mode" --data "$work/g$i-$mode" --listen "127.0.0.1:1860$i" --peers "$peers" "${ca[@]}" \
      >"$work/g$i-$mode.log" 2>&1 &
    pids+=($!)
  done
  for i in 0 1 2; do ready "$scheme://127.0.0.1:1860$i"; done
  sleep 5   # let every replica's bootstrap tokens commit
  leader="$(curl -skf -H "Authorization: Bearer $(cat "$work/g0-$mode/admin.token")" \
    "$scheme://127.0.0.1:18600/api/v1/cluster" | sed -E 's/.*"leader":"([^"]+)".*/\1/')"
  echo "leader: $leader"
  submit "warm-up (discarded)" "$work/g0-$mode" "$leader" --duration 30 --concurrency 64 >/dev/null
  for i in $(seq 1 "$runs"); do
    submit "closed loop, run $i" "$work/g0-$mode" "$leader" --duration 10 --concurrency 64
  done
  for p in "${pids[@]: -3}"; do kill "$p"; done
  wait 2>/dev/null || true

  echo "### heartbeats of 10,000 agents at 1/s, one replica, --$mode"
  ./kairos server --"$mode" --data "$work/hb-$mode" --listen 127.0.0.1:18800 >"$work/hb-$mode.log" 2>&1 &
  pids+=($!)
  ready "$scheme://127.0.0.1:18800"
  for i in $(seq 1 "$runs"); do
    echo "== heartbeats, run $i"
    ca=(); [ -f "$work/hb-$mode/ca.pem" ] && ca=(--ca "$work/hb-$mode/ca.pem")
    ./kairos bench heartbeats --url "$scheme://127.0.0.1:18800" "${ca[@]}" \
      --join-token-file "$work/hb-$mode/join.token" --agents 10000 --rate 1 --duration 30s --warmup 10s \
      | grep -E "rate|latency|errors|late"
  done
  kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
done
