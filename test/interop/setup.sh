#!/usr/bin/env bash
# Installs what the Java interop tests (test/interop, test/activemq) need beside JDK 17: Debian's
# JDBC drivers for MariaDB and PostgreSQL, Jackson (the Java failover reader), and the ActiveMQ
# Classic broker (package activemq; never started as a service: the tests run it as a child JVM).
# Installs with apt-get only when something is missing, then prints the jars the tests use. Run as
# root (CI) or with everything already installed.
set -euo pipefail

MARIADB_JAR=/usr/share/java/mariadb-java-client.jar
POSTGRES_JAR=/usr/share/java/postgresql.jar
JACKSON_JAR=/usr/share/java/jackson-databind.jar
ACTIVEMQ_JAR=/usr/share/activemq/bin/activemq.jar

for tool in java javac; do
  command -v "$tool" >/dev/null || { echo "test/interop/setup.sh: $tool not found (JDK 17 is required)" >&2; exit 1; }
done

missing=()
[ -f "$MARIADB_JAR" ] || missing+=(libmariadb-java)
[ -f "$POSTGRES_JAR" ] || missing+=(libpostgresql-jdbc-java)
[ -f "$JACKSON_JAR" ] || missing+=(libjackson2-databind-java)
[ -e "$ACTIVEMQ_JAR" ] || missing+=(activemq)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test/interop/setup.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # The package's service must not start: a policy-rc.d that says no to every start, for this install only.
  policy=/usr/sbin/policy-rc.d
  had_policy=0
  [ -e "$policy" ] && had_policy=1
  [ "$had_policy" = 1 ] || { printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"; }
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
  [ "$had_policy" = 1 ] || rm -f "$policy"
fi

for jar in "$MARIADB_JAR" "$POSTGRES_JAR" "$JACKSON_JAR" "$ACTIVEMQ_JAR"; do
  [ -f "$jar" ] || { echo "test/interop/setup.sh: $jar is still missing after apt-get" >&2; exit 1; }
  echo "$jar"
done
