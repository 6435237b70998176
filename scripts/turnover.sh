#!/usr/bin/env bash
# Turnover benchmark: a controller and N agents as real processes on this machine (each agent
# emulates 8 GPUs), then `kairos bench turnover`: J one-GPU jobs that exit at once, jobs/s end to
# end and submit-to-start latency. Prints one JSON line per run, then (on stderr) the CPU seconds
# of the server, the agents and the tasks' processes, the same per job, and the agents' heartbeat
# exchanges per job.
# Each agent advertises --cpus CPUs (default 64: 8 per GPU, as the Slurm peer harness configures
# its nodes; a job asks 1 CPU, so the host's own 2 CPUs would let a node run only 2 jobs at once).
# --warm-ups K runs K warm-up runs of J jobs first (default 1), not reported: the server's C2
# compiler is still busy after one (TURNOVER_THREADS=1 shows how much).
# Usage: scripts/turnover.sh [--agents 16] [--jobs 2000] [--runs 1] [--warm-ups 1] [--cpus 64] [--keep DIR]
set -euo pipefail
TIMEFORMAT='%U %S'
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
agents=16 jobs=2000 runs=1 warmups=1 port=18700 keep="" cpus=64
while [ $# -gt 0 ]; do
  case "$1" in
    --agents) agents="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --warm-ups) warmups="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    --cpus) cpus="$2"; shift 2 ;;
    *) echo "turnover: unknown option $1" >&2; exit 2 ;;
  esac
done
work="${keep:-$(mktemp -d)}"
mkdir -p "$work"
pids=()
cleanup() {
  # Stop what this script started, by PID: agents first (they stop their tasks), then the server.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[$i]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -z "$keep" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT

./kairos --version >/dev/null   # build once, before any timing
url="http://127.0.0.1:$port"
KAIROS_JAVA_OPTS="${TURNOVER_SERVER_JAVA_OPTS:-}" ./kairos server --data "$work/server" --listen "127.0.0.1:$port" --allow-root-jobs >"$work/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 240); do
  curl -sf -m 1 "$url/readyz" >/dev/null 2>&1 && break
  sleep 0.5
done
curl -sf -m 1 "$url/readyz" >/dev/null || { echo "turnover: the server did not become ready" >&2; exit 1; }
for _ in $(seq 1 240); do [ -s "$work/server/join.token" ] && [ -s "$work/server/admin.token" ] && break; sleep 0.5; done
export KAIROS_TOKEN="$(cat "$work/server/admin.token")"
# Lift the count limits, as an admin would for a load test (the defaults bound one user's jobs).
./kairos limits set --server "$url" --max-jobs-per-user 1000000000 --max-live-jobs 1000000000 >/dev/null
for i in $(seq 1 "$agents"); do
  opts="${TURNOVER_AGENT_JAVA_OPTS:-}"; [ "$i" = 1 ] && opts="$opts ${TURNOVER_AGENT1_JAVA_OPTS:-}"
  KAIROS_JAVA_OPTS="$opts" ./kairos agent --controller "$url" --join-token-file "$work/server/join.token" \
    --node-name "$(printf 'tn%03d' "$i")" --data "$work/agent-$i" --emulate-gpus 8 \
    --cpus "$cpus" --allow-root-jobs --no-cgroups >"$work/agent-$i.log" 2>&1 &
  pids+=($!)
done
for _ in $(seq 1 240); do
  up="$(./kairos nodes --server "$url" 2>/dev/null | grep -c ' UP ' || true)"
  [ "$up" -ge "$agents" ] && break
  sleep 0.5
done
[ "$up" -ge "$agents" ] || { echo "turnover: only $up of $agents agents registered" >&2; exit 1; }
# A warm-up run as large as the measured ones (the JIT of the server and the agents), not
# reported: with a short one (2 jobs per GPU) the first measured runs were still 30% slower.
for _ in $(seq 1 "$warmups"); do
  ./kairos bench turnover --server "$url" --jobs "$jobs" >"$work/warm-up.out" 2>&1 \
    || { echo "turnover: a warm-up run did not end cleanly (going on):" >&2; tail -n 1 "$work/warm-up.out" >&2; }
done
# CPU time the server and the agents used (warm-up included), for where the machine's time went.
# utime and stime (fields 14 and 15 of /proc/PID/stat), counted from the end as below.
cpu() { awk -v t="$(getconf CLK_TCK)" '{ n = NF; printf "%.2f", ($(n - 38) + $(n - 37)) / t }' "/proc/$1/stat"; }
# The tasks' processes (supervisor, shells, the program) are the agents' children: the kernel adds
# their CPU to the agent's cutime and cstime (fields 16 and 17 of /proc/PID/stat, in ticks) once
# reaped. Fields counted from the end, since the command name may hold spaces.
children() { awk -v t="$(getconf CLK_TCK)" '{ n = NF; printf "%.2f", ($(n - 36) + $(n - 35)) / t }' "/proc/$1/stat"; }
# totals: "server agents tasks" CPU seconds so far.
totals() {
  local a=0 c=0 p
  for p in "${pids[@]:1}"; do
    a="$(awk -v a="$a" -v b="$(cpu "$p")" 'BEGIN { printf "%.2f", a + b }')"
    c="$(awk -v a="$c" -v b="$(children "$p")" 'BEGIN { printf "%.2f", a + b }')"
  done
  echo "$(cpu "${pids[0]}") $a $c"
}
# CPU seconds per thread name (digits dropped) of the processes given, one "name<TAB>seconds" line
# per name (for TURNOVER_THREADS below).
thread_cpu() { for p in "$@"; do for t in /proc/"$p"/task/*; do
  awk -v t="$(getconf CLK_TCK)" '{ s = $0; sub(/^[0-9]+ \(/, "", s); name = s; sub(/\) [A-Z] .*$/, "", name);
    rest = s; sub(/^.*\) /, "", rest); split(rest, f, " "); gsub(/[0-9]+/, "#", name);
    printf "%s\t%.3f\n", name, (f[12] + f[13]) / t }' "$t/stat" 2>/dev/null; done; done \
  | awk -F'\t' '{ c[$1] += $2 } END { for (n in c) printf "%s\t%.3f\n", n, c[n] }'; }
# The measured runs alone (no JVM start, JIT warm-up or warm-up run): the steady cost per job.
[ -n "${TURNOVER_THREADS:-}" ] && thread_cpu "${pids[0]}" >"$work/server-threads-0"
[ -n "${TURNOVER_THREADS:-}" ] && thread_cpu "${pids[@]:1}" >"$work/agent-threads-0"
read -r s0 a0 c0 <<<"$(totals)"
# The Raft log's applied index, for log entries per job over the measured runs.
applied() { curl -sf -m 5 -H "Authorization: Bearer $KAIROS_TOKEN" "$url/metrics" \
  | awk '$1 == "kairos_raft_applied_index" { printf "%d", $2 }'; }
i0="$(applied || true)"
for r in $(seq 1 "$runs"); do
  # A run with failed jobs (a lease lost on an overloaded host) still prints its line; the CPU
  # figures below must come out all the same.
  # The bench client is a JVM on the same 2 cores: its CPU (start included) is kept apart.
  # (Its own stderr goes to ours through fd 3; only bash's `time` line goes to bench-cpu.)
  { time ./kairos bench turnover --server "$url" --jobs "$jobs" --csv "$work/jobs-$r.csv" --output json 2>&3 \
    | tr -d '\n ' || true; } 3>&2 2>>"$work/bench-cpu"
  echo
done
read -r server_cpu agents_cpu chain_cpu <<<"$(totals)"
bench_cpu="$(awk '{ s += $1 + $2 } END { printf "%.2f", s }' "$work/bench-cpu")"
i1="$(applied || true)"
total=$((jobs * (runs + warmups)))
# TURNOVER_THREADS=1: CPU seconds per thread name (digits dropped), server and agents apart, for
# where a process's time goes without a profiler (JIT compilers, GC, the agent's loop, HTTP).
if [ -n "${TURNOVER_THREADS:-}" ]; then
  threads() { for p in "$@"; do for t in /proc/"$p"/task/*; do
    awk -v t="$(getconf CLK_TCK)" '{ s = $0; sub(/^[0-9]+ \(/, "", s); name = s; sub(/\) [A-Z] .*$/, "", name);
      rest = s; sub(/^.*\) /, "", rest); split(rest, f, " "); gsub(/[0-9]+/, "#", name);
      printf "%s\t%.3f\n", name, (f[12] + f[13]) / t }' "$t/stat" 2>/dev/null; done; done \
    | awk -F'\t' '{ c[$1] += $2 } END { for (n in c) if (c[n] >= 0.05) printf "  %8.2f s  %s\n", c[n], n }' | sort -rn; }
  echo "server threads:" >&2; threads "${pids[0]}" >&2
  # The server's threads over the measured runs alone (threads that ended meanwhile left out).
  echo "server threads, measured runs only (ms per job):" >&2
  thread_cpu "${pids[0]}" | awk -F'\t' -v n="$((jobs * runs))" 'NR == FNR { b[$1] = $2; next }
    { d = $2 - b[$1]; if (d >= 0.005 * n / 1000) printf "  %8.3f  %s\n", 1000 * d / n, $1 }' \
    "$work/server-threads-0" - | sort -rn >&2
  echo "agent threads (all agents):" >&2; threads "${pids[@]:1}" >&2
  echo "agent threads (all agents), measured runs only (ms per job):" >&2
  thread_cpu "${pids[@]:1}" | awk -F'\t' -v n="$((jobs * runs))" 'NR == FNR { b[$1] = $2; next }
    { d = $2 - b[$1]; if (d >= 0.005 * n / 1000) printf "  %8.3f  %s\n", 1000 * d / n, $1 }' \
    "$work/agent-threads-0" - | sort -rn >&2
fi
echo "cpu seconds: server $server_cpu, agents $agents_cpu, tasks' processes $chain_cpu; the bench client, measured runs: $bench_cpu" >&2
awk -v s="$server_cpu" -v a="$agents_cpu" -v c="$chain_cpu" -v n="$total" \
  'BEGIN { printf "cpu ms per job (warm-up and JVM starts included): server %.2f, agents %.2f, tasks %.2f\n", 1000 * s / n, 1000 * a / n, 1000 * c / n }' >&2
awk -v s="$server_cpu" -v a="$agents_cpu" -v c="$chain_cpu" -v s0="$s0" -v a0="$a0" -v c0="$c0" -v n="$((jobs * runs))" \
  'BEGIN { printf "cpu ms per job (measured runs only): server %.2f, agents %.2f, tasks %.2f, total %.2f\n", 1000 * (s - s0) / n, 1000 * (a - a0) / n, 1000 * (c - c0) / n, 1000 * (s - s0 + a - a0 + c - c0) / n }' >&2
# Agent exchanges per job (warm-up included): heartbeats served, and how many of them were held
# long polls answered early because the agent had sent news on another connection.
[ -n "$i0" ] && [ -n "$i1" ] && awk -v a="$i0" -v b="$i1" -v n="$((jobs * runs))" \
  'BEGIN { printf "raft log entries: %d for %d jobs (measured runs: %.3f per job)\n", b - a, n, (b - a) / n }' >&2
metric() { curl -sf -m 5 -H "Authorization: Bearer $KAIROS_TOKEN" "$url/metrics" \
  | awk -v m="$1" '$1 == m { print $2 }'; }
awk -v h="$(metric kairos_agent_heartbeats_total)" -v s="$(metric kairos_agent_heartbeats_superseded_total)" \
  -v w="$(metric kairos_agent_heartbeats_pass_waits_total)" -v n="$total" \
  'BEGIN { if (h != "") printf "heartbeats: %d for %d jobs (%.2f per job; %d superseded polls, %d waited for the pass)\n", h, n, h / n, s, w }' >&2
