#!/usr/bin/env bash
# Turnover, Kairos and Slurm side by side on this machine: the same node count (8 emulated GPUs
# each) and the same number of one-GPU jobs that exit at once (`true`), several runs each, one
# after the other (never together: they share the cores). Kairos: scripts/turnover.sh (a
# controller and N `kairos agent` processes; one warm-up run, not reported). Slurm: the peer
# harness in ../shared/peers/slurm (real Slurm 22.05, `throughput --method array`; needs root).
# Prints a Markdown table: jobs/s end to end, median and range over the runs.
# Usage: scripts/turnover-vs-slurm.sh [--nodes 16] [--jobs 2000] [--runs 3]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
nodes=16 jobs=2000 runs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    *) echo "turnover-vs-slurm: unknown option $1" >&2; exit 2 ;;
  esac
done
slurm="$root/../shared/peers/slurm/run.sh"
[ -x "$slurm" ] || { echo "turnover-vs-slurm: no Slurm harness at $slurm" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

echo "== Kairos: $nodes agents, $jobs jobs, $runs runs" >&2
scripts/turnover.sh --agents "$nodes" --jobs "$jobs" --runs "$runs" | tee "$out/kairos.jsonl" >&2
for r in $(seq 1 "$runs"); do
  echo "== Slurm: $nodes nodes, $jobs jobs, run $r" >&2
  "$slurm" throughput --nodes "$nodes" --jobs "$jobs" --method array --out "$out/slurm-$r" \
    >"$out/slurm-$r.json" 2>"$out/slurm-$r.log" || { tail -20 "$out/slurm-$r.log" >&2; exit 1; }
  tr -d '\n ' <"$out/slurm-$r.json" >>"$out/slurm.jsonl"
  echo >>"$out/slurm.jsonl"
  tail -1 "$out/slurm.jsonl" >&2
done

python3 - "$out" "$nodes" "$jobs" <<'EOF'
import json, statistics, sys
out, nodes, jobs = sys.argv[1], sys.argv[2], sys.argv[3]
def load(name):
    return [json.loads(l) for l in open(f"{out}/{name}.jsonl") if l.strip().startswith("{")]
def fmt(xs, digits=1):
    xs = sorted(xs)
    return f"{statistics.median(xs):,.{digits}f} ({xs[0]:,.{digits}f}-{xs[-1]:,.{digits}f})"
k, s = load("kairos"), load("slurm")
print(f"| scheduler ({nodes} nodes x 8 GPUs, {jobs} one-GPU jobs, {len(k)}/{len(s)} runs) "
      "| jobs/s end to end, median (range) | all ended after, s | submit to start p50 / p99, ms |")
print("| --- | --- | --- | --- |")
print(f"| Kairos | {fmt([r['jobs_per_s'] for r in k])} | {fmt([r['seconds'] for r in k], 2)} "
      f"| {fmt([r['submit_to_start_ms']['p50'] for r in k], 0)} / "
      f"{fmt([r['submit_to_start_ms']['p99'] for r in k], 0)} |")
print(f"| Slurm 22.05 (array) | {fmt([r['end_to_end_jobs_per_s'] for r in s])} "
      f"| {fmt([r['time_to_all_finished_s'] for r in s], 2)} | - |")
EOF
