#!/usr/bin/env bash
# The MCP Python SDK for the interoperability test (TestPythonSDKInterop in
# cmd/flow/interop_python_test.go), installed from the committed, hashed
# mcp/testdata/interop-python/requirements.txt into a venv of its own.
#
#   scripts/mcp-python.sh prepare   create the venv (what .ci/run calls; a rerun reuses it)
#   scripts/mcp-python.sh env       print FLOW_TEST_PYTHON_BIN, the venv's python, for the test
#
# The venv lives in ${FLOW_TEST_CACHE:-$HOME/.cache/flow-test}/mcp-python/<hash>,
# where <hash> is that of the requirements file, so a change of pins makes a
# new venv. It is built with python3.11 when there is one, else python3
# (the hashes are those of the CPython 3.11 wheels for Linux x86_64), with
# pip --require-hashes --no-deps --only-binary=:all: (about 15 s the first time).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
REQ="$ROOT/mcp/testdata/interop-python/requirements.txt"
home=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
sum=$(sha256sum "$REQ" | cut -c1-16)
VENV="${FLOW_TEST_CACHE:-$home/.cache/flow-test}/mcp-python/$sum"
PY="$VENV/bin/python"

log() { printf 'mcp-python: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

prepare() {
	if [ -x "$PY" ] && [ -e "$VENV/.installed" ]; then
		return
	fi
	base=$(command -v python3.11 || command -v python3 || true)
	[ -n "$base" ] || die "python3 is missing; install Python 3.11 and rerun"
	rm -rf "$VENV"
	log "installing the MCP Python SDK from $REQ into $VENV"
	"$base" -m venv "$VENV"
	"$PY" -m pip install --quiet --disable-pip-version-check --no-input \
		--require-hashes --no-deps --only-binary=:all: -r "$REQ" </dev/null
	"$PY" -c 'import mcp.client.session' || die "the SDK does not import in $VENV"
	touch "$VENV/.installed"
}

case "${1:-}" in
prepare) prepare ;;
env) printf 'FLOW_TEST_PYTHON_BIN=%s\n' "$PY" ;;
*) die "usage: scripts/mcp-python.sh prepare|env" ;;
esac
