#!/usr/bin/env bash
# Installs what the local Kafka broker and Redis need, when the machine lacks it:
# Debian's redis-server, and the Kafka jars from Maven Central (infra/kafka/pom.xml).
# Idempotent and quick when everything is already there.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"

if [ -z "${REDIS_URL:-}" ] && ! command -v redis-server >/dev/null 2>&1; then
  echo "ensure-tools: installing redis-server (Debian)"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq redis-server >/dev/null
fi

libs="$root/.local/kafka/libs"
if [ -z "${KAFKA_BROKERS:-}" ] && [ ! -f "$libs/.complete" ]; then
  for tool in java mvn; do
    command -v "$tool" >/dev/null 2>&1 || { echo "ensure-tools: $tool is required to run the local Kafka broker" >&2; exit 1; }
  done
  echo "ensure-tools: fetching the Kafka broker jars (Maven Central)"
  rm -rf "$libs"
  mvn -q -f "$root/infra/kafka/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$libs"
  touch "$libs/.complete"
fi
