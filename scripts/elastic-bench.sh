#!/usr/bin/env bash
# Time to resize an elastic torchrun job and to preempt a job by checkpoint (issue 17), with
# real processes on this machine: a kairos server, three agents (emulated GPUs), Debian's
# python3-torch (gloo, CPU). Prints p50/p95 over N trials of each, with the load average before
# and after (the figures are wall-clock times: compare them only at a similar load).
#   resize: ElasticTorchIT#resizeTimes, a 1-2 node trainer (docs/examples/train_elastic.py under
#     docs/examples/torchrun_elastic.sh) shrunk to 1 node by a waiting 2-node gang and grown back
#     when it ends; from the decision to rank 0's first step at the new world size.
#   preempt: CheckpointPreemptionIT, from the preemptor's submission to the victim stopped after
#     the checkpoint it was asked for.
# Usage: scripts/elastic-bench.sh [trials=20]   (about 30 s a resize trial on quiet cores)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
. scripts/java-home.sh
trials="${1:-20}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
echo "load before: $(uptime)"
./mvnw -o -pl cli -am verify -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false \
  -Dfailsafe.failIfNoSpecifiedTests=false \
  -Dit.test='ElasticTorchIT#resizeTimes,CheckpointPreemptionIT' \
  -Dkairos.elasticTrials="$trials" -Dkairos.checkpointTrials="$trials" >"$log" 2>&1 || {
  tail -80 "$log"
  exit 1
}
echo "load after:  $(uptime)"
grep -h -E "^(elastic resize|preempt-by-checkpoint) (over|trial)" "$log" cli/target/failsafe-reports/*-output.txt 2>/dev/null | sort -u
