#!/usr/bin/env bash
# The crash test for longer: kill -9 the controller at random moments for N rounds (default
# 200; the test suite runs 20) and check after each restart that every acknowledged job and
# cancel survived and no GPU is allocated twice. A failing round prints its seed; replay it
# with KAIROS_CRASH_SEED=<seed>. Usage: scripts/crash-soak.sh [rounds]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
rounds="${1:-200}"
args=(-pl control -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false
  -Dit.test=CrashRecoveryIT -Dfailsafe.failIfNoSpecifiedTests=false "-Dkairos.crash.rounds=$rounds")
if [ -n "${KAIROS_CRASH_SEED:-}" ]; then
  args+=("-Dkairos.crash.seed=$KAIROS_CRASH_SEED")
fi
exec ./test "${args[@]}"
