#!/usr/bin/env bash
# The CPU of one supervised task start, by launch path (the JDK's ProcessBuilder and setsid, or
# posix_spawn through FFM): the agent JVM's own CPU and its reaped children's, per start, with the
# agent's JVM flags. Builds the agent module's classes first (no install).
# Usage: scripts/spawn-cost.sh [starts per round, default 600] [rounds, default 3]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
. scripts/java-home.sh
cp_file="$(mktemp)"
trap 'rm -f "$cp_file"' EXIT
./mvnw -o -q -pl agent -am test-compile dependency:build-classpath -Dmdep.outputFile="$cp_file" >&2
"$JAVA_HOME/bin/java" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 --enable-native-access=ALL-UNNAMED \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -cp "agent/target/classes:agent/target/test-classes:$(cat "$cp_file")" \
  io.kairos.agent.SpawnCost "${1:-600}" "${2:-3}"
