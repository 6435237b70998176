#!/usr/bin/env bash
# The sustained open loop of issue 15 point 2: one replica, 1,000 submits/s for 10 minutes while
# the jobs run and finish. Starts a fresh server (GC log on; JFR with KAIROS_BENCH_JFR=1), lifts
# the count and rate limits as an admin would for a load test, then runs
#   kairos bench submit --rate R --duration D --agents A --task-time T --server-stats
# (A emulated agents of 8 GPUs over the real agent API take each job at once, hold it T and
# report exit 0), after a 30 s warm-up at the same rate that is not reported. Prints each
# window's p50/p90/p99/p99.9/max with the load average and the server's live jobs, jobs in the
# replicated state, heap and snapshots; then the whole run's figures, the server's snapshot log
# lines, its GC pauses and the CPU it used.
# Usage: scripts/bench-open-loop.sh [duration=10m] [rate=1000]
#   KAIROS_BENCH_AGENTS (64), KAIROS_BENCH_TASK_TIME (100ms), KAIROS_BENCH_WINDOW (60s),
#   KAIROS_BENCH_WARMUP (30s), KAIROS_BENCH_KEEP=DIR keeps the server's directory and logs,
#   KAIROS_BENCH_JFR=1 records a JFR file there (profile settings), KAIROS_SERVER_JAVA_OPTS.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
duration="${1:-10m}"
rate="${2:-1000}"
agents="${KAIROS_BENCH_AGENTS:-64}"
task="${KAIROS_BENCH_TASK_TIME:-100ms}"
window="${KAIROS_BENCH_WINDOW:-60s}"
warmup="${KAIROS_BENCH_WARMUP:-30s}"
port="${KAIROS_BENCH_PORT:-18540}"
keep="${KAIROS_BENCH_KEEP:-}"
work="${keep:-$(mktemp -d)}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -z "$keep" ] && rm -rf "$work"
  return 0
}
trap cleanup EXIT

./kairos --version >/dev/null # build once, before any timing
url="http://127.0.0.1:$port"
opts="-Xlog:gc:file=$work/gc.log:uptime,level ${KAIROS_SERVER_JAVA_OPTS:-}"
if [ -n "${KAIROS_BENCH_JFR:-}" ]; then
  opts="$opts -XX:StartFlightRecording=filename=$work/server.jfr,settings=profile,dumponexit=true"
fi
KAIROS_JAVA_OPTS="$opts" ./kairos server --data "$work/server" --listen "127.0.0.1:$port" \
  --allow-root-jobs >"$work/server.log" 2>&1 &
server=$!
pids+=("$server")
for _ in $(seq 1 240); do
  curl -sf -m 1 "$url/readyz" >/dev/null 2>&1 && break
  sleep 0.5
done
curl -sf -m 1 "$url/readyz" >/dev/null || { echo "bench: the server did not become ready" >&2; exit 1; }
for _ in $(seq 1 100); do [ -s "$work/server/join.token" ] && [ -s "$work/server/admin.token" ] && break; sleep 0.2; done
export KAIROS_TOKEN="$(cat "$work/server/admin.token")"
./kairos limits set --server "$url" --max-jobs-per-user 1000000000 --max-live-jobs 1000000000 \
  --submits-per-sec 1000000 --submit-burst 1000000 >/dev/null

bench() { # duration, extra args...
  ./kairos bench submit --server "$url" --rate "$rate" --duration "$1" --concurrency 128 \
    --agents "$agents" --task-time "$task" --join-token-file "$work/server/join.token" "${@:2}"
}
echo "== warm-up: $warmup at $rate/s (not reported); load $(cut -d' ' -f1-3 /proc/loadavg)"
bench "$warmup" -o json >/dev/null || true
tick="$(getconf CLK_TCK)"
cpu0="$(awk '{print $14 + $15}' "/proc/$server/stat")"
echo "== open loop: $rate submits/s for $duration, $agents emulated agents x 8 GPUs, tasks of $task;" \
  "load $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
bench "$duration" --window "$window" --server-stats || status=$?
cpu1="$(awk '{print $14 + $15}' "/proc/$server/stat")"
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg); server CPU in the run: $(((cpu1 - cpu0) / tick)) s"
echo "== the server's snapshots (whole run, warm-up included):"
grep -E 'snapshot at index' "$work/server.log" | sed -E 's/.*(snapshot at index)/  \1/' | tail -n 40 || true
echo "== GC pauses (from -Xlog:gc):"
awk '/Pause/ { n++; v = $NF; sub(/ms$/, "", v); if (v + 0 > max) max = v + 0; sum += v }
     END { if (n) printf "  %d pauses, total %.1f ms, longest %.3f ms\n", n, sum, max; else print "  none logged" }' \
  "$work/gc.log"
grep -cE 'Allocation Stall' "$work/gc.log" | sed 's/^/  allocation stalls: /' || true
[ -n "$keep" ] && echo "== kept in $work (server.log, gc.log${KAIROS_BENCH_JFR:+, server.jfr})"
exit "$status"
