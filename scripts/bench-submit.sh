#!/usr/bin/env bash
# The submit path's benchmark (issue 15, points 2 and 4), one command under 3 minutes on 2 quiet
# cores: acknowledged submits/s against real servers on this machine, one replica (closed loop
# and a 1,000/s open loop) and a group of three (closed loop at the leader and through a
# follower). Beside each wall-clock figure it prints the CPU the servers used per 1,000
# acknowledged submits (from /proc), which a loaded machine changes far less than the rate.
# Usage: scripts/bench-submit.sh [runs=3] [seconds=10]
#   KAIROS_BENCH_LONG=10m also runs the 1,000/s open loop on one replica for that long;
#   KAIROS_BENCH_ONLY=one or three runs one part only.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
runs="${1:-3}"
secs="${2:-10}"
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

./kairos --version >/dev/null # build once, before any timing
tick="$(getconf CLK_TCK)"

ready() { # url
  for _ in $(seq 1 240); do
    curl -sf -m 1 "$1/readyz" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "bench: $1 did not become ready" >&2
  return 1
}

cpu_ticks() { # pids... -> their user+system clock ticks, summed
  local t=0 p
  for p in "$@"; do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo "$t"
}

# No agent runs, so every submit stays pending: lift the count and rate limits
# (docs/security.md), as an admin would for a load test.
unlimit() { # url
  ./kairos limits set --server "$1" --max-jobs-per-user 1000000000 --max-live-jobs 1000000000 \
    --submits-per-sec 1000000 --submit-burst 1000000 >/dev/null
}

# label, url, server pids (comma separated), bench args...: one line of figures.
bench() {
  local label="$1" url="$2" servers="$3"
  shift 3
  local before after out rate ack
  IFS=, read -ra sp <<<"$servers"
  before="$(cpu_ticks "${sp[@]}")"
  out="$(./kairos bench submit --server "$url" -o json "$@" || true)"
  after="$(cpu_ticks "${sp[@]}")"
  ack="$(sed -nE 's/.*"jobs_acknowledged" : ([0-9]+).*/\1/p' <<<"$out")"
  rate="$(sed -nE 's/.*"rate_jobs_per_s" : ([0-9.]+).*/\1/p' <<<"$out")"
  awk -v l="$label" -v r="$rate" -v a="$ack" -v c="$((after - before))" -v t="$tick" \
    -v p50="$(sed -nE 's/.*"p50" : ([0-9.]+).*/\1/p' <<<"$out")" \
    -v p99="$(sed -nE 's/.*"p99" : ([0-9.]+).*/\1/p' <<<"$out")" \
    -v e="$(sed -nE 's/.*"errors" : ([0-9]+).*/\1/p' <<<"$out")" \
    -v load="$(cut -d' ' -f1 /proc/loadavg)" \
    'BEGIN { printf "%-28s %8.0f jobs/s  p50 %7.1f ms  p99 %7.1f ms  errors %s  server CPU %5.1f ms/1000 submits  load %s\n",
             l, r, p50, p99, e, (a > 0 ? c * 1000.0 / t / a * 1000 : 0), load }'
  grep -q '"first_error"' <<<"$out" && sed -nE 's/.*"first_error" : (.*)/    first error: \1/p' <<<"$out"
  return 0
}

only="${KAIROS_BENCH_ONLY:-}"
if [ "$only" != three ]; then
echo "### one replica"
./kairos server --data "$work/one" --listen 127.0.0.1:18500 --allow-root-jobs >"$work/one.log" 2>&1 &
one=$!
pids+=("$one")
ready http://127.0.0.1:18500
export KAIROS_TOKEN="$(cat "$work/one/admin.token")"
unlimit http://127.0.0.1:18500
bench "warm-up (discarded)" http://127.0.0.1:18500 "$one" --duration 20 --concurrency 64 >/dev/null
for i in $(seq 1 "$runs"); do
  bench "closed loop, run $i" http://127.0.0.1:18500 "$one" --duration "$secs" --concurrency 64
done
bench "1,000/s open loop" http://127.0.0.1:18500 "$one" --duration "$((secs * 2))" --rate 1000 --concurrency 128
if [ -n "${KAIROS_BENCH_LONG:-}" ]; then # its figures per minute, then the whole run's
  echo "== 1,000/s open loop for $KAIROS_BENCH_LONG (load before: $(cut -d' ' -f1 /proc/loadavg))"
  ./kairos bench submit --server http://127.0.0.1:18500 --duration "$KAIROS_BENCH_LONG" \
    --rate 1000 --concurrency 128 || true
  echo "(load after: $(cut -d' ' -f1-3 /proc/loadavg))"
fi
kill "$one"
wait "$one" 2>/dev/null || true
fi
[ "$only" = one ] && exit 0

echo "### three replicas (one machine, Raft over mutual TLS)"
peers=127.0.0.1:18600,127.0.0.1:18601,127.0.0.1:18602
./kairos tls create-ca --out "$work/ca" >/dev/null 2>&1
group=()
for i in 0 1 2; do
  ./kairos server --data "$work/g$i" --listen "127.0.0.1:1860$i" --peers "$peers" \
    --ca-from "$work/ca" --allow-root-jobs >"$work/g$i.log" 2>&1 &
  group+=($!)
  pids+=($!)
done
for i in 0 1 2; do ready "http://127.0.0.1:1860$i"; done
export KAIROS_TOKEN="$(cat "$work/g0/admin.token")"
leader=""
for _ in $(seq 1 60); do
  leader="$(curl -sf -H "Authorization: Bearer $KAIROS_TOKEN" http://127.0.0.1:18600/api/v1/cluster |
    sed -nE 's/.*"leader":"([^"]+)".*/\1/p' || true)"
  [ -n "$leader" ] && unlimit "$leader" 2>/dev/null && break
  sleep 1
done
follower="$(for p in 18600 18601 18602; do
  [ "http://127.0.0.1:$p" != "$leader" ] && echo "http://127.0.0.1:$p" && break
done)"
echo "leader $leader, follower $follower"
all="$(IFS=,; echo "${group[*]}")"
# Three JVMs to warm up (the JIT compiles each one's own path): both paths, twice.
for _ in 1 2; do
  bench "warm-up (discarded)" "$leader" "$all" --duration 8 --concurrency 128 >/dev/null
  bench "warm-up (discarded)" "$follower" "$all" --duration 8 --concurrency 128 >/dev/null
done
for i in $(seq 1 "$runs"); do
  bench "leader, run $i" "$leader" "$all" --duration "$secs" --concurrency 128
  bench "through a follower, run $i" "$follower" "$all" --duration "$secs" --concurrency 128
done
if [ -n "${KAIROS_BENCH_CONCURRENCY:-}" ]; then # e.g. "1 8": how latency bounds the rate
  for c in $KAIROS_BENCH_CONCURRENCY; do
    bench "leader, concurrency $c" "$leader" "$all" --duration "$secs" --concurrency "$c"
    bench "follower, concurrency $c" "$follower" "$all" --duration "$secs" --concurrency "$c"
  done
fi
