#!/usr/bin/env bash
# Regenerates the golden inputs (*.json) from real reports (after `make build
# fake-ollama`): bin/flow on a copy
# of examples/calc with the scripted model of examples/demo-model.json and the
# real go vet / go test checks, as `make demo` runs it. Temporary paths and the
# fake server's port are replaced by stable ones. Then run
#   go test ./cmd/flow/internal/human -update
# and read the diff of the .golden files.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../../.." && pwd)
bin="$root/bin"
tmp=$(mktemp -d)
fake_pid=""
cleanup() { [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

fake() { # fake SCRIPT: start the scripted server, set $url
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null || true
	rm -f "$tmp/fake.out"; mkfifo "$tmp/fake.out"
	"$bin/flow-fake-ollama" -script "$1" >"$tmp/fake.out" &
	fake_pid=$!
	read -r first <"$tmp/fake.out"
	url=${first#listening on }
	sed -i "s|^base_url = .*|base_url = \"$url\"|" "$tmp/ops.toml"
}
stable() { # stable FILE: stable paths and port
	sed -i -e "s|$tmp/calc|/home/dev/demo/calc|g" -e "s|$tmp|/home/dev/demo|g" \
		-e 's|http://127.0.0.1:[0-9]*|http://127.0.0.1:11434|g' "$1"
}

cp -r "$root/examples/calc" "$tmp/calc"
cat >"$tmp/ops.toml" <<TOML
workspace_dir = "calc"

[ollama]
base_url = "http://127.0.0.1:9"

[agent]
max_cycles = 1

[checks.vet]
cmd = ["go", "vet", "./..."]
kind = "lint"
filetypes = ["go"]

[checks.test]
cmd = ["go", "test", "./..."]
kind = "test"
filetypes = ["go"]
TOML
export XDG_STATE_HOME="$tmp/state" NO_COLOR=1

# A failing check before the fix, and one refused without --trusted.
"$bin/flow" check --trusted -c "$tmp/ops.toml" >"$here/check-fail.json" || true
"$bin/flow" check -c "$tmp/ops.toml" >"$here/check-untrusted.json" || true
"$bin/flow" check --trusted -c "$tmp/ops.toml" tset >"$here/check-unknown.json" || true

# The demo's verified run, with its diff; then its undo, with what it restores.
fake "$root/examples/demo-model.json"
"$bin/flow" run --trusted -c "$tmp/ops.toml" "Fix Add so the tests pass" >"$here/run-ok.json"
"$bin/flow" status -c "$tmp/ops.toml" >"$here/status.json"
"$bin/flow" undo -c "$tmp/ops.toml" >"$here/undo.json"

# A run whose reviewer rejects the change.
python3 - "$root/examples/demo-model.json" "$tmp/reject.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["turns"][-1]["content"] = json.dumps({"approved": False, "summary": "Add is fixed but nothing tests negative numbers.", "issues": ["No test covers Add with negative numbers", "The commit message is missing"]})
json.dump(s, open(sys.argv[2], "w"))
PY
fake "$tmp/reject.json"
"$bin/flow" run --trusted -c "$tmp/ops.toml" "Fix Add so the tests pass" >"$here/run-rejected.json" || true
"$bin/flow" undo -c "$tmp/ops.toml" >/dev/null || true

# A run that ends in error: the scripted model has no turn left.
fake "$root/examples/demo-model.json"
kill "$fake_pid"; wait "$fake_pid" 2>/dev/null || true
python3 - "$tmp/empty.json" <<'PY'
import json, sys
json.dump({"version": "0.17.4", "models": ["qwen2.5-coder:7b"], "capabilities": {"qwen2.5-coder:7b": ["completion", "tools"]}, "turns": []}, open(sys.argv[1], "w"))
PY
fake "$tmp/empty.json"
"$bin/flow" run --trusted -c "$tmp/ops.toml" "Fix Add" >"$here/run-error.json" || true

# Status of a workspace with no configuration: the onboarding warnings.
mkdir -p "$tmp/noconfig"
XDG_CONFIG_HOME="$tmp/noconfig" "$bin/flow" status -w "$tmp/calc" >"$here/status-onboarding.json" || true

for f in status-onboarding check-fail check-untrusted check-unknown run-ok status undo run-rejected run-error; do
	stable "$here/$f.json"
done
