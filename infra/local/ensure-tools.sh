#!/usr/bin/env bash
# Installs what the tests need, when the machine lacks it: Debian's redis-server, caddy and chromium, the Kafka jars
# from Maven Central (infra/kafka/pom.xml), and Schemathesis from PyPI in its own virtualenv. The
# fault suite and the benchmark always start their own broker and redis-server (they stop and
# restart them), so both are installed even when KAFKA_BROKERS and REDIS_URL point elsewhere.
# Idempotent and quick when everything is already there.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"

if ! command -v redis-server >/dev/null 2>&1; then
  echo "ensure-tools: installing redis-server (Debian)"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq redis-server >/dev/null
fi

# Caddy, the reverse proxy that gives ingest and query one address (infra/proxy/Caddyfile).
if ! command -v caddy >/dev/null 2>&1; then
  echo "ensure-tools: installing caddy (Debian)"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq caddy >/dev/null
fi

# Debian's chromium for the dashboard's browser tests (driven by playwright-core; never a browser download).
if ! command -v chromium >/dev/null 2>&1; then
  echo "ensure-tools: installing chromium (Debian)"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq chromium >/dev/null
fi

libs="$root/.local/kafka/libs"
if [ ! -f "$libs/.complete" ]; then
  for tool in java mvn; do
    command -v "$tool" >/dev/null 2>&1 || { echo "ensure-tools: $tool is required to run the local Kafka broker" >&2; exit 1; }
  done
  echo "ensure-tools: fetching the Kafka broker jars (Maven Central)"
  rm -rf "$libs"
  mvn -q -f "$root/infra/kafka/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$libs"
  touch "$libs/.complete"
fi

schemathesis_version="4.32.5"
venv="$root/.local/schemathesis"
if [ ! -f "$venv/.complete-$schemathesis_version" ]; then
  echo "ensure-tools: installing Schemathesis $schemathesis_version (PyPI)"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "schemathesis==$schemathesis_version"
  touch "$venv/.complete-$schemathesis_version"
fi

# The Python client's test venv: clients/python with the real livekit-agents and pipecat-ai from
# PyPI, pinned by clients/python/constraints.txt; made again when either file changes.
clients_venv="$root/.local/clients-python"
clients_hash="$(cat "$root/clients/python/pyproject.toml" "$root/clients/python/constraints.txt" | sha256sum | cut -c1-16)"
if [ ! -f "$clients_venv/.complete-$clients_hash" ]; then
  echo "ensure-tools: installing the Python client's test environment (PyPI: livekit-agents, pipecat-ai)"
  rm -rf "$clients_venv"
  python3 -m venv "$clients_venv"
  "$clients_venv/bin/pip" install -q --disable-pip-version-check \
    -c "$root/clients/python/constraints.txt" -e "$root/clients/python[livekit,pipecat,test]"
  touch "$clients_venv/.complete-$clients_hash"
fi
