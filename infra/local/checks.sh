#!/usr/bin/env bash
# The static checks of `npm test` side by side: typecheck, lint and the Prettier check each use about one
# core for part of their run, so together they take the longest one's time rather than the sum. Each
# one's output is printed whole after it ends, so that two tools' messages never interleave; the
# script fails if any check fails, naming it.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
checks=(typecheck lint format:check)
pids=()
for check in "${checks[@]}"; do
  npm run -s "$check" >"$out/${check/:/-}" 2>&1 &
  pids+=($!)
done
failed=()
for i in "${!checks[@]}"; do
  if ! wait "${pids[$i]}"; then failed+=("${checks[$i]}"); fi
  cat "$out/${checks[$i]/:/-}"
done
if ((${#failed[@]} > 0)); then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
