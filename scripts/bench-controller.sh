#!/usr/bin/env bash
# Controller benchmarks: acknowledged submits per second and latency against real servers on
# this machine, one replica and a group of three, then submit-to-running latency with a local
# agent. Each server gets a warm-up run first (the JIT needs a few seconds of load); the runs
# after it are the figures. Usage: scripts/bench-controller.sh [runs=3]
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
    curl -sf -m 1 "$1/readyz" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "bench: $1 did not become ready" >&2
  return 1
}

# No agent runs, so every submit stays pending and the state grows by it: lift the count limits
# (docs/security.md) for the benchmark, as an admin would for a load test.
unlimit() {  # token file, url
  KAIROS_TOKEN="$(cat "$1")" ./kairos limits set --server "$2" \
    --max-jobs-per-user 1000000000 --max-live-jobs 1000000000 \
    --submits-per-sec 1000000 --submit-burst 1000000 >/dev/null
}

bench() {  # label, token file, url, bench args...
  local label="$1" token="$2" url="$3"
  shift 3
  echo "== $label: kairos bench submit $*"
  KAIROS_TOKEN="$(cat "$token")" ./kairos bench submit --server "$url" "$@" | grep -E "rate|latency|errors"
}

echo "### one replica"
./kairos server --data "$work/one" --listen 127.0.0.1:18500 --allow-root-jobs >"$work/one.log" 2>&1 &
pids+=($!)
ready http://127.0.0.1:18500
unlimit "$work/one/admin.token" http://127.0.0.1:18500
bench "warm-up (discarded)" "$work/one/admin.token" http://127.0.0.1:18500 --duration 20 --concurrency 64 >/dev/null
for i in $(seq 1 "$runs"); do
  bench "closed loop, run $i" "$work/one/admin.token" http://127.0.0.1:18500 --duration 10 --concurrency 64
done
for i in $(seq 1 "$runs"); do
  bench "1,000/s open loop, run $i" "$work/one/admin.token" http://127.0.0.1:18500 --duration 20 --rate 1000
done
kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true

echo "### three replicas (one machine)"
peers=127.0.0.1:18600,127.0.0.1:18601,127.0.0.1:18602
./kairos tls create-ca --out "$work/ca" >/dev/null 2>&1   # the group's shared CA (Raft over mutual TLS)
for i in 0 1 2; do
  ./kairos server --data "$work/g$i" --listen "127.0.0.1:1860$i" --peers "$peers" --ca-from "$work/ca" --allow-root-jobs \
    >"$work/g$i.log" 2>&1 &
  pids+=($!)
done
for i in 0 1 2; do ready "http://127.0.0.1:1860$i"; done
sleep 5   # let every replica's bootstrap tokens commit
# Submit to the leader (a follower forwards each write to it: one more hop on the same 2 cores).
leader="$(curl -sf -H "Authorization: Bearer $(cat "$work/g0/admin.token")" \
  http://127.0.0.1:18600/api/v1/cluster | sed -E 's/.*"leader":"([^"]+)".*/\1/')"
echo "leader: $leader"
unlimit "$work/g0/admin.token" "$leader"
bench "warm-up (discarded)" "$work/g0/admin.token" "$leader" --duration 30 --concurrency 64 >/dev/null
for i in $(seq 1 "$runs"); do
  bench "closed loop, run $i" "$work/g0/admin.token" "$leader" --duration 10 --concurrency 64
done
for i in $(seq 1 "$runs"); do
  bench "closed loop via a follower, run $i" "$work/g0/admin.token" \
    "$(for p in 18600 18601 18602; do [ "http://127.0.0.1:$p" != "$leader" ] && echo "http://127.0.0.1:$p" && break; done)" \
    --duration 10 --concurrency 64
done
for p in "${pids[@]: -3}"; do kill "$p"; done
wait 2>/dev/null || true

echo "### submit to running (kairos up: controller + local agent, idle)"
./kairos up --data "$work/up" --listen 127.0.0.1:18700 --gpus 8 >"$work/up.log" 2>&1 &
pids+=($!)
ready http://127.0.0.1:18700
sleep 3
KAIROS_TOKEN="$(cat "$work/up/admin.token")" ./kairos bench latency --server http://127.0.0.1:18700 --count 20 >/dev/null
for i in $(seq 1 "$runs"); do
  echo "== bench latency, run $i"
  KAIROS_TOKEN="$(cat "$work/up/admin.token")" ./kairos bench latency --server http://127.0.0.1:18700 --count 100
done
