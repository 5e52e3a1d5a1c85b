#!/usr/bin/env bash
# Installs what the tests need, when the machine lacks it: Debian's redis-server, caddy, chromium, gdb, curl and jq, the Kafka jars
# from Maven Central (infra/kafka/pom.xml), and from PyPI Schemathesis, and the Python client's wheelhouse
# and development environment, each in its own virtualenv. The
# fault suite and the benchmark always start their own broker and redis-server (they stop and
# restart them), so both are installed even when KAFKA_BROKERS and REDIS_URL point elsewhere.
# Idempotent and quick when everything is already there.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"

# debian_package COMMAND PACKAGE: installs PACKAGE from Debian when COMMAND is missing.
debian_package() {
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "ensure-tools: installing $2 (Debian)"
  local sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq "$2" >/dev/null
}

debian_package redis-server redis-server

# Caddy, the reverse proxy that gives ingest and query one address (infra/proxy/Caddyfile).
debian_package caddy caddy

# Debian's chromium for the dashboard's browser tests (driven by playwright-core; never a browser download).
debian_package chromium chromium

# gdb, for the soak's malloc_trim after a heap snapshot (bench/soak/malloc-trim.ts).
debian_package gdb gdb

# curl and jq, for the README's tour and the docs' tested blocks (test/integration/docs.test.ts).
debian_package curl curl
debian_package jq jq

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

# The Python client's wheelhouse and development venv. The wheelhouse holds a wheel of every pin in
# clients/python/constraints.txt (livekit-agents, pipecat-ai, pytest, build, setuptools and what they need),
# downloaded from PyPI once: the client tests build callmeter's wheel and install it into a fresh venv from
# there with no index (test/support/client-packages-setup.ts). The venv is clients/python installed editable
# under the same pins, with `build`. Each is made again when what it comes from changes.
clients_venv="$root/.local/clients-python"
wheelhouse="$root/.local/clients-python-wheels"
constraints="$root/clients/python/constraints.txt"
clients_hash="$(cat "$root/clients/python/pyproject.toml" "$constraints" | sha256sum | cut -c1-16)"
wheels_hash="$({ cat "$constraints"; python3 --version; } | sha256sum | cut -c1-16)"
if [ ! -f "$clients_venv/.complete-$clients_hash" ]; then
  rm -rf "$clients_venv"
  python3 -m venv "$clients_venv"
fi
if [ ! -f "$wheelhouse/.complete-$wheels_hash" ]; then
  echo "ensure-tools: downloading the Python client's wheelhouse (PyPI: livekit-agents, pipecat-ai, pytest, build)"
  rm -rf "$wheelhouse"
  "$clients_venv/bin/pip" wheel -q --disable-pip-version-check -w "$wheelhouse" -c "$constraints" -r "$constraints"
  touch "$wheelhouse/.complete-$wheels_hash"
fi
if [ ! -f "$clients_venv/.complete-$clients_hash" ]; then
  echo "ensure-tools: installing the Python client's development venv (from the wheelhouse)"
  "$clients_venv/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$wheelhouse" \
    -c "$constraints" -e "$root/clients/python[livekit,pipecat,test]" build
  touch "$clients_venv/.complete-$clients_hash"
fi
