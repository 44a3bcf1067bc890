#!/usr/bin/env bash
# aider, the peer the evaluation measures flow against (make eval-aider), in
# a venv of its own under the cache, at a pinned PyPI version.
#
#   scripts/aider-venv.sh [install]   create the venv and install aider-chat (a rerun installs nothing);
#                                     prints the aider executable's path on stdout
#   scripts/aider-venv.sh path        print that path without installing (exit 1 when not installed)
#
# The venv is ${FLOW_TEST_CACHE:-$HOME/.cache/flow-test}/aider/<version>/venv,
# the version AIDER_VERSION (default 0.86.2). aider-chat pins each of its
# dependencies to one version, so the same version installs the same
# packages (112 of them, about 700 MB). It needs a Python that
# aider-chat supports (3.10 to 3.12); AIDER_PYTHON picks the interpreter
# (default python3).
#
# At run time aider must not reach past the model server: the harness runs
# it with --no-check-update, --analytics-disable, --no-show-release-notes
# and LITELLM_LOCAL_MODEL_COST_MAP=True (litellm otherwise fetches its model
# price map from GitHub when it is imported); see doc/eval.md.
set -euo pipefail

VERSION="${AIDER_VERSION:-0.86.2}"
PY="${AIDER_PYTHON:-python3}"
DIR="${FLOW_TEST_CACHE:-$HOME/.cache/flow-test}/aider/$VERSION"
VENV="$DIR/venv"
STAMP="$DIR/installed"

log() { printf 'aider-venv: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# installed: the stamp names this version and the executable runs.
installed() {
	[ -x "$VENV/bin/aider" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "aider-chat==$VERSION" ]
}

install() {
	if installed; then
		log "aider-chat $VERSION is already installed in $VENV"
		printf '%s\n' "$VENV/bin/aider"
		return 0
	fi
	command -v "$PY" >/dev/null || die "no $PY: install Python 3.10-3.12 (or set AIDER_PYTHON)"
	local pyver
	pyver="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
	case "$pyver" in
	3.10 | 3.11 | 3.12) ;;
	*) die "$PY is Python $pyver; aider-chat $VERSION needs 3.10, 3.11 or 3.12 (set AIDER_PYTHON)" ;;
	esac
	rm -f "$STAMP"
	if [ ! -x "$VENV/bin/python" ]; then
		log "creating $VENV with $PY ($pyver)"
		mkdir -p "$DIR"
		"$PY" -m venv "$VENV" || die "could not create the venv (Debian: apt-get install python3-venv)"
	fi
	log "pip install aider-chat==$VERSION (about 100 packages from PyPI; a few minutes the first time)"
	local out
	if ! out="$("$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --progress-bar off -q \
		"aider-chat==$VERSION" 2>&1 </dev/null)"; then
		printf '%s\n' "$out" | tail -n 15 >&2
		die "could not install aider-chat==$VERSION from PyPI into $VENV; check that this machine reaches PyPI and rerun"
	fi
	# The import that matters at run time, offline: aider's main module
	# with litellm's bundled price map.
	LITELLM_LOCAL_MODEL_COST_MAP=True "$VENV/bin/python" -c 'import aider.main' </dev/null ||
		die "aider-chat $VERSION installed but does not import in $VENV"
	printf 'aider-chat==%s\n' "$VERSION" >"$STAMP"
	log "installed aider-chat $VERSION: $VENV/bin/aider"
	printf '%s\n' "$VENV/bin/aider"
}

case "${1:-install}" in
install) install ;;
path)
	installed || die "aider-chat $VERSION is not installed in $VENV: run $0"
	printf '%s\n' "$VENV/bin/aider"
	;;
*) die "usage: $0 [install|path]" ;;
esac
