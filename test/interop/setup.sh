#!/usr/bin/env bash
# Installs what the Java interop tests (test/interop) need beside JDK 17: Debian's JDBC drivers
# for MariaDB and PostgreSQL. Installs with apt-get only when a jar is missing, then prints the
# classpath the tests use. Run as root (CI) or with the jars already installed.
set -euo pipefail

MARIADB_JAR=/usr/share/java/mariadb-java-client.jar
POSTGRES_JAR=/usr/share/java/postgresql.jar

for tool in java javac; do
  command -v "$tool" >/dev/null || { echo "test/interop/setup.sh: $tool not found (JDK 17 is required)" >&2; exit 1; }
done

missing=()
[ -f "$MARIADB_JAR" ] || missing+=(libmariadb-java)
[ -f "$POSTGRES_JAR" ] || missing+=(libpostgresql-jdbc-java)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test/interop/setup.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

for jar in "$MARIADB_JAR" "$POSTGRES_JAR"; do
  [ -f "$jar" ] || { echo "test/interop/setup.sh: $jar is still missing after apt-get" >&2; exit 1; }
  echo "$jar"
done
