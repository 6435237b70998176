#!/usr/bin/env bash
# The elastic/checkpoint table of docs/policy-results.md ("Elastic and checkpointed jobs"): the
# kairos policy with elasticity off and on (--elastic-share 0.5) and checkpoint cost off and on
# (--checkpoint-cost 60s), on the Sia "Helios" (Saturn) and Sia "Philly" workloads (16x4 GPUs,
# means over the files) and on the Philly trace's first DAYS days under its 15-VC tenancy
# (scripts/philly-tenancy.sh; preemption needs a tenancy), 64x8 GPUs.
# Usage: scripts/elastic-table.sh [DAYS]  (default 30)   Env: OUT (default target/elastic-table)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
traces="${KAIROS_TRACES:-$root/../shared/traces}"
out="${OUT:-$root/target/elastic-table}"
days="${1:-30}"
mkdir -p "$out"
settings=("off|" "ckpt|--checkpoint-cost 60s" "elastic|--elastic-share 0.5" "both|--elastic-share 0.5 --checkpoint-cost 60s")
row() { # name, files of JSON reports (one run each): means of the figures
  local name="$1"; shift
  jq -s -r --arg name "$name" '
    def m(f): (map(f // 0) | add / length);
    "| \($name) | \(m(.utilization) * 1000 | round / 1000) | \(m(.mean_jct_s) | round) | \(m(.mean_bounded_slowdown) * 100 | round / 100) | \(m(.gpu_hours_lost_to_preemption // .tenancy.preemption_gpu_hours_lost) * 10 | round / 10) | \(m(.resizes) | round) | \(m(.migrations) | round) |"' "$@"
}
echo "| run | utilization | mean JCT (s) | mean bounded slowdown | GPU-h lost to preemption | resizes | migrations |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for set in "helios/sia_saturn_workloads:sia-helios" "philly/sia_philly_workloads:sia-philly"; do
  dir="${set%%:*}"; name="${set##*:}"
  for s in "${settings[@]}"; do
    label="${s%%|*}"; flags="${s#*|}"
    [ "$label" = ckpt ] && continue # no tenancy, so no preemption: the same as off
    files=()
    for f in "$traces/$dir"/workload-*.csv; do
      j="$out/$name-$label-$(basename "$f" .csv).json"
      # shellcheck disable=SC2086
      "$root/kairos" simulate --trace "$f" --cluster 16x4 --policy kairos --no-timing --json $flags >"$j"
      files+=("$j")
    done
    row "$name, $label" "${files[@]}"
  done
done
for s in "${settings[@]}"; do
  label="${s%%|*}"; flags="${s#*|}"
  j="$out/philly-$label.json"
  OUT="$out/philly-$label" POLICIES=kairos FORMAT=--json EXTRA="--no-alone-runs $flags" \
    "$root/scripts/philly-tenancy.sh" "$days" 2>/dev/null >"$j"
  row "philly $days d (tenancy), $label" "$j"
done
