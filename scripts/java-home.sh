# Sourced by ./kairos and ./test: sets JAVA_HOME to a JDK >= 25 or exits 2 with what is needed.
java_major() { # the feature version of the JDK whose java binary is $1, or 0
  local release; release="$(dirname "$(dirname "$1")")/release"
  if [ -f "$release" ]; then # the JDK's release file: no JVM start needed
    sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$release" | head -n 1
    return
  fi
  "$1" -XshowSettings:properties -version 2>&1 \
    | awk -F'= ' '/java.specification.version/ {print $2; exit}' | cut -d. -f1 || echo 0
}

find_java_home() {
  local candidates=()
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  candidates+=(/usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk-arm64
    /usr/lib/jvm/java-25-openjdk-amd64 /usr/lib/jvm/java-25-openjdk-arm64)
  local d
  for d in /usr/lib/jvm/* /opt/java/* /opt/jdk*; do [ -d "$d" ] && candidates+=("$d"); done
  if command -v java >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
  fi
  local home v
  for home in "${candidates[@]}"; do
    if [ -x "$home/bin/java" ] && [ -x "$home/bin/javac" ]; then
      v="$(java_major "$home/bin/java")"
      if [ "${v:-0}" -ge 25 ] 2>/dev/null; then echo "$home"; return 0; fi
    fi
  done
  return 1
}

if ! JAVA_HOME="$(find_java_home)"; then
  echo "kairos: needs a JDK 25 or newer (java and javac). Install Temurin 25 and set JAVA_HOME," >&2
  echo "        e.g. JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64" >&2
  exit 2
fi
export JAVA_HOME
export MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow ${MAVEN_OPTS:-}"
