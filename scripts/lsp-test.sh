#!/usr/bin/env bash
# Real language servers for the editor-tool tests (plugin/lsp_test.go):
# gopls built from the Go module proxy at a pinned version, and pyright
# installed with npm from the committed lockfile
# plugin/testdata/lsp/package-lock.json.
#
#   scripts/lsp-test.sh prepare   install every server (what .ci/run and make test-lsp call)
#   scripts/lsp-test.sh gopls     build gopls only (cached; a rerun reuses it)
#   scripts/lsp-test.sh pyright   npm ci the lockfile only (skipped when installed)
#   scripts/lsp-test.sh env       print the FLOW_TEST_* paths the tests read
#
# gopls lives in ${FLOW_TEST_CACHE:-$HOME/.cache/flow-test}/gopls/<version>/gopls
# (about 40 s to build the first time on two cores). v0.20.0 builds with
# this repository's Go (1.26); gopls v0.24.0 and later need a newer Go.
# pyright 1.1.407 lives in plugin/testdata/lsp/node_modules (ignored by git)
# and runs on node.
set -euo pipefail

GOPLS_VERSION=v0.20.0
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
home=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
CACHE="${FLOW_TEST_CACHE:-$home/.cache/flow-test}/gopls/$GOPLS_VERSION"
GOPLS="$CACHE/gopls"
NODE_DIR="$ROOT/plugin/testdata/lsp"
PYRIGHT="$NODE_DIR/node_modules/.bin/pyright-langserver"

log() { printf 'lsp-test: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

build_gopls() {
	if [ -x "$GOPLS" ] && "$GOPLS" version >/dev/null 2>&1; then
		return
	fi
	command -v go >/dev/null || die "go is missing; install Go and rerun"
	mkdir -p "$CACHE"
	log "building gopls $GOPLS_VERSION into $CACHE (about a minute the first time)"
	# GOTOOLCHAIN=local: build with this Go, never download another one;
	# GOFLAGS replaced, so that a user's -mod=vendor or the like does not apply.
	GOBIN="$CACHE" GOTOOLCHAIN=local GOFLAGS=-buildvcs=false go install "golang.org/x/tools/gopls@$GOPLS_VERSION" </dev/null
	"$GOPLS" version >/dev/null || die "$GOPLS does not run"
}

install_pyright() {
	if [ -x "$PYRIGHT" ] && [ "$NODE_DIR/package-lock.json" -ot "$NODE_DIR/node_modules/.package-lock.json" ]; then
		return
	fi
	command -v npm >/dev/null || die "npm is missing; install nodejs and npm and rerun"
	log "installing pyright from plugin/testdata/lsp/package-lock.json"
	npm ci --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error </dev/null
}

case "${1:-}" in
prepare)
	build_gopls
	install_pyright
	;;
gopls) build_gopls ;;
pyright) install_pyright ;;
env)
	printf 'FLOW_TEST_GOPLS=%s\n' "$GOPLS"
	printf 'FLOW_TEST_PYRIGHT=%s\n' "$PYRIGHT"
	;;
*) die "usage: scripts/lsp-test.sh prepare|gopls|pyright|env" ;;
esac
