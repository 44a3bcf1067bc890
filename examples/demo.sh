#!/usr/bin/env bash
# A complete verified flow run on a copy of examples/calc, with a SCRIPTED
# model: bin/flow-fake-ollama replays examples/demo-model.json over Ollama's
# real HTTP API. The checks (go vet, go test) are real. Run it with `make demo`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$here/../bin" && pwd)
tmp=$(mktemp -d)
fake_pid=""
cleanup() { [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

cp -r "$here/calc" "$tmp/calc"
mkfifo "$tmp/fake.out"
"$bin/flow-fake-ollama" -script "$here/demo-model.json" >"$tmp/fake.out" &
fake_pid=$!
read -r first <"$tmp/fake.out"
url=${first#listening on }

cat >"$tmp/ops.toml" <<TOML
workspace_dir = "calc"

[ollama]
base_url = "$url"

[checks.vet]
cmd = ["go", "vet", "./..."]
kind = "lint"
filetypes = ["go"]

[checks.test]
cmd = ["go", "test", "./..."]
kind = "test"
filetypes = ["go"]
TOML

export XDG_STATE_HOME="$tmp/state"
echo "== the model is scripted (examples/demo-model.json); the checks are real"
echo "== before:"; grep -n 'return' "$tmp/calc/calc.go"
echo "== flow run --trusted -c ops.toml \"Fix Add so the tests pass\""
status=0
"$bin/flow" run --trusted -c "$tmp/ops.toml" "Fix Add so the tests pass" >"$tmp/report.json" || status=$?
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps({k: r[k] for k in ("status","verified","changed_files","cycles","model_calls","tool_calls","summary")}, indent=2))' "$tmp/report.json"
echo "== exit code: $status"
echo "== after:"; grep -n 'return' "$tmp/calc/calc.go"
echo "== flow undo"
"$bin/flow" undo -c "$tmp/ops.toml" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["status"], "restored:", r["restored"])'
echo "== after undo:"; grep -n 'return' "$tmp/calc/calc.go"
exit "$status"
