#!/usr/bin/env bash
# Behaviour fingerprint of the scheduler: the simulator's per-job output (--jobs-out) on the
# shared traces, one SHA-256 per run. A refactoring that claims "behaviour unchanged" prints the
# same lines before and after. Usage: scripts/jobs-digest.sh [OUTDIR]   (keeps the CSVs there)
# Env: KAIROS_TRACES (default ../shared/traces beside the repository), QUICK=1 (skip Philly plain).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
traces="${KAIROS_TRACES:-$root/../shared/traces}"
out="${1:-$root/target/jobs-digest}"
mkdir -p "$out"
runs=(
  "sdsc swf/SDSC-SP2-1998-4.2-cln.swf.gz 128x1 fcfs,easy,conservative,sjf,kairos"
  "kth swf/KTH-SP2-1996-2.1-cln.swf.gz 100x1 fcfs,easy,conservative,sjf,kairos"
  "sdsc-first-fit swf/SDSC-SP2-1998-4.2-cln.swf.gz 128x1 easy,kairos --placement first-fit"
  "philly philly/pollux_philly_jobs.csv.gz 64x8 fcfs,easy,sjf,kairos"
  "philly-comm philly/pollux_philly_jobs.csv.gz 64x8 kairos --rack-size 8 --comm-model"
)
for run in "${runs[@]}"; do
  read -r name file cluster policies extra <<<"$run"
  [ "${QUICK:-}" = 1 ] && [[ "$name" == philly* ]] && continue
  # shellcheck disable=SC2086
  "$root/kairos" simulate --trace "$traces/$file" --cluster "$cluster" --policy "$policies" \
    --no-timing --jobs-out "$out/$name.csv" ${extra:-} >"$out/$name.txt"
  echo "$name $(sha256sum <"$out/$name.csv" | cut -c1-16) $(grep -v '^trace ' "$out/$name.txt" | sha256sum | cut -c1-16)"
done
# Under a tenancy: Philly's 15 virtual clusters as queues of one cohort (scripts/philly-tenancy.sh),
# without the per-queue runs alone.
if [ "${QUICK:-}" != 1 ]; then
  OUT="$out/tenancy" TRACE="$traces/philly/pollux_philly_jobs.csv.gz" \
    EXTRA="--jobs-out $out/tenancy.csv --no-alone-runs" "$root/scripts/philly-tenancy.sh" >"$out/tenancy.txt" 2>/dev/null
  echo "philly-tenancy $(sha256sum <"$out/tenancy.csv" | cut -c1-16) $(sha256sum <"$out/tenancy.txt" | cut -c1-16)"
fi
