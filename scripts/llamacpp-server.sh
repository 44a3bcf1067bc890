#!/usr/bin/env bash
# llama.cpp's own OpenAI-compatible server, for the evaluation's second
# OpenAI-compatible server beside Ollama's /v1 (doc/eval.md §2.8).
#
#   scripts/llamacpp-server.sh install   build llama-cpp-python[server] from PyPI (its sdist carries
#                                        llama.cpp's source) into a venv under the cache; a rerun
#                                        builds nothing
#   scripts/llamacpp-server.sh serve [PORT] [N_CTX]
#                                        serve the 1.5B weights of scripts/model-weights.sh on
#                                        127.0.0.1:PORT (8080) with a window of N_CTX tokens
#                                        (16384), as the model flow-qwen2.5-coder:1.5b
#   scripts/llamacpp-server.sh path      print the venv's python (exit 1 when not installed)
#
# The venv is ${FLOW_TEST_CACHE:-$HOME/.cache/flow-test}/llamacpp/<version>/venv,
# the version LLAMACPP_VERSION (default 0.3.36). The build compiles
# llama.cpp with cmake for this CPU (GGML_NATIVE: AVX2/FMA where the CPU
# has them), about 10-20 minutes on two cores. The server is llama-cpp-
# python's (python -m llama_cpp.server): its chat template is the GGUF's own
# (Qwen2.5's, with tool calls), its structured output is response_format.
set -euo pipefail

VERSION="${LLAMACPP_VERSION:-0.3.36}"
PY="${LLAMACPP_PYTHON:-python3}"
CACHE="${FLOW_TEST_CACHE:-$HOME/.cache/flow-test}"
DIR="$CACHE/llamacpp/$VERSION"
VENV="$DIR/venv"
STAMP="$DIR/installed"
GGUF="$CACHE/models/qwen2.5-coder-1.5b.gguf"

log() { printf 'llamacpp-server: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

installed() {
	[ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "llama-cpp-python[server]==$VERSION" ]
}

install() {
	if installed; then
		log "llama-cpp-python $VERSION is already built in $VENV"
		return 0
	fi
	command -v "$PY" >/dev/null || die "no $PY: install Python 3.9 or newer (or set LLAMACPP_PYTHON)"
	command -v cmake >/dev/null || die "no cmake: install it (apt-get install cmake)"
	rm -f "$STAMP"
	[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
	log "building llama-cpp-python[server] $VERSION from PyPI (compiles llama.cpp; minutes)"
	CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=on}" "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
		--no-binary llama-cpp-python "llama-cpp-python[server]==$VERSION" </dev/null
	printf '%s\n' "llama-cpp-python[server]==$VERSION" >"$STAMP"
	log "built in $VENV"
}

serve() {
	local port="${1:-8080}" nctx="${2:-16384}"
	installed || die "llama-cpp-python $VERSION is not built: run $0 install"
	[ -f "$GGUF" ] || die "no weights at $GGUF: run scripts/model-weights.sh fetch"
	log "serving $GGUF on 127.0.0.1:$port with a window of $nctx tokens"
	exec "$VENV/bin/python" -m llama_cpp.server --model "$GGUF" --model_alias flow-qwen2.5-coder:1.5b \
		--host 127.0.0.1 --port "$port" --n_ctx "$nctx" --n_threads "$(nproc)"
}

case "${1:-install}" in
install) install ;;
serve) shift; serve "$@" ;;
path) installed && printf '%s\n' "$VENV/bin/python" ;;
*) die "usage: $0 [install|serve [PORT] [N_CTX]|path]" ;;
esac
