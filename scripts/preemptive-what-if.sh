#!/usr/bin/env bash
# Issue 16.2's fifth round: an idealised preemptive policy (every job checkpoints) on the six
# workloads of docs/policy-results.md, beside textbook EASY in the same model. Not Kairos'
# scheduler: see scripts/whatif/PreemptiveWhatIf.java for the model and its options.
# Usage: scripts/preemptive-what-if.sh [POLICY key=value...]   (default: each variant measured)
# Needs a built tree (./kairos builds it): cli/target/kairos.jar and the testkit jar.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
traces="${KAIROS_TRACES:-$root/../shared/traces}"
. "$root/scripts/java-home.sh"
testkit=$(ls "$root"/testkit/target/kairos-testkit-*.jar 2>/dev/null | grep -v -e sources -e tests | head -n 1 || true)
if [ ! -f "$root/cli/target/kairos.jar" ] || [ -z "$testkit" ]; then
  echo "preemptive-what-if: build first (./kairos version)" >&2
  exit 2
fi
cp="$root/cli/target/kairos.jar:$testkit"
classes=$(mktemp -d)
trap 'rm -rf "$classes"' EXIT
"$JAVA_HOME/bin/javac" -nowarn -cp "$cp" -d "$classes" "$root/scripts/whatif/PreemptiveWhatIf.java"
# Workload, GPUs as one count (the machine's nodes x GPUs per node).
runs=(
  "SDSC $traces/swf/SDSC-SP2-1998-4.2-cln.swf.gz 128"
  "KTH $traces/swf/KTH-SP2-1996-2.1-cln.swf.gz 100"
  "Lublin-1 $traces/swf/lublin_256.swf 256"
  "Lublin-2 $traces/swf/lublin_256_new2.swf 256"
  "Philly $traces/philly/pollux_philly_jobs.csv.gz 512"
  "generated gen:jobs=20000,load=0.95,max-gpus=256,seed=1 1024"
)
if [ $# -gt 0 ]; then
  variants=("$*")
else
  variants=(
    "easy"
    "srpt alpha=0.5 guard=sticky"
    "srpt alpha=0.5 guard=oldest shield=true"
    "factor hysteresis=2 guard=sticky"
    "factor hysteresis=2 guard=oldest shield=true"
    "factor hysteresis=2 guard=all shield=true barrier=true"
  )
fi
for v in "${variants[@]}"; do
  for r in "${runs[@]}"; do
    read -r name file gpus <<<"$r"
    # shellcheck disable=SC2086 # the variant is words on purpose
    printf '%s | %s\n' "$name" "$("$JAVA_HOME/bin/java" -cp "$cp:$classes" PreemptiveWhatIf "$file" "$gpus" $v)"
  done
done
