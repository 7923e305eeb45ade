#!/usr/bin/env bash
# Stop hook for AI clients: hands the payload on stdin to `git-rutter capture`.
# A hook must never break the client: stdout stays empty and the exit status is always 0.
# Usage in a client's hook config: /abs/path/to/hooks/rutter-stop.sh --client claude
set -uo pipefail
bin="${RUTTER_BIN:-git-rutter}"
if ! command -v "$bin" >/dev/null 2>&1; then
  echo "[librarian-capture] git-rutter is not on PATH; nothing captured." >&2
  exit 0
fi
"$bin" capture "$@" >/dev/null || true
exit 0
