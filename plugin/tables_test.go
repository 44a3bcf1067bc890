package plugin_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The shared tables of path and argument cases, run through the editor
// tool module in a real Neovim. Go runs the same files through bufferfs
// (TestPathTable) and runtime/tools (TestArgTable), so both sides are held
// to one record of what is accepted and what is refused. The Lua runners
// read the tables themselves, as JSON decoded by Neovim, and report every
// case whose outcome differs from the table.

// pathRunner runs every case of the path table through the module's path
// checks: workspace.clean() with and without the root allowed, and the
// tools that take a path. A refused path must fail with its rule's message
// and no other rule's; an accepted one must clean to the table's result
// (exactly) and fail, if at all, for a reason that is not a lexical rule,
// except that the tools that need a file refuse the root.
const pathRunner = `
local tab = vim.json.decode(table.concat(vim.fn.readfile(select(1, ...), "b"), "\n"))
local ws = require("flow.tools.workspace")
local tools = require("flow.tools")

local function expand(p)
  if type(p) == "string" then
    return p
  end
  local out = {}
  for _, piece in ipairs(p) do
    local s = piece
    if type(piece) == "table" then
      s = piece.text or piece.hex:gsub("%x%x", function(h)
        return string.char(tonumber(h, 16))
      end)
      s = s:rep(piece.times or 1)
    end
    out[#out + 1] = s
  end
  return table.concat(out)
end

-- show quotes at most n (default 40) bytes of s, with control and
-- non-ASCII bytes as \xNN, so that a failure says which bytes a path had.
local function show(s, n)
  n = n or 40
  local cut = #s > n and s:sub(1, n) .. "..." or s
  return '"' .. cut:gsub("[%c\128-\255\"\\]", function(ch)
    return string.format("\\x%02x", ch:byte())
  end) .. '"'
end

local function rules_in(msg)
  local found = {}
  for name, text in pairs(tab.rules) do
    if msg:find(text, 1, true) then
      found[#found + 1] = name
    end
  end
  return found
end

local failures = {}
for _, c in ipairs(tab.cases) do
  local p = expand(c.path)
  local want = c.same and p or c.clean and expand(c.clean)
  local function check(op, needs_file, exact, ok, got)
    local problem
    local rules = ok and {} or rules_in(got)
    if c.refused then
      if ok or #rules ~= 1 or rules[1] ~= c.refused then
        problem = "want refused by " .. c.refused
      end
    elseif needs_file and want == "." then
      if ok or not got:find(tab.root, 1, true) then
        problem = "want the root refusal"
      end
    elseif exact and (not ok or got ~= want) then
      problem = "want " .. show(want)
    elseif #rules > 0 then
      problem = "want no lexical refusal"
    end
    if problem then
      failures[#failures + 1] = string.format("%s: %s(%s) = %s %s; %s",
        c.name, op, show(p), ok and "ok" or "error", show(tostring(got), ok and 40 or 160), problem)
    end
  end
  if c.bytes ~= nil and #p ~= c.bytes then
    failures[#failures + 1] = string.format("%s: the path is %d bytes, the table says %d", c.name, #p, c.bytes)
  end
  local ok, res = pcall(ws.clean, p, true)
  check("clean(allow_root)", false, true, ok, ok and res or res.message)
  ok, res = pcall(ws.clean, p)
  check("clean", true, true, ok, ok and res or res.message)
  for _, call in ipairs({
    { "file_read", { path = p }, true },
    { "editor_context", { path = p }, true },
    { "file_list", { path = p }, false },
    { "file_write", { path = p, content = "" }, true },
  }) do
    res = tools.call(call[1], call[2])
    check(call[1], call[3], false, res.status ~= "error", res.error or res.status)
  end
end
return { ran = #tab.cases, failures = failures }
`

// argRunner runs every case of the argument table through the module's
// validator with the case's schema, expecting the case's lua outcome when
// it has one, else its want: "ok", or a message with every Lua keyword of
// the wanted classes that names the argument at.
const argRunner = `
local tab = vim.json.decode(table.concat(vim.fn.readfile(select(1, ...), "b"), "\n"))
local validate = require("flow.tools.args").validate

local function expand(v)
  if type(v) ~= "table" or next(v) == nil then
    return v
  end
  if v["$repeat"] ~= nil then
    local inner, out = expand(v["$repeat"]), {}
    for i = 1, v["$times"] do
      out[i] = inner
    end
    return out
  end
  if v["$nest"] ~= nil then
    local inner = expand(v["$nest"])
    for _ = 1, v["$depth"] do
      inner = v["$key"] and { [v["$key"]] = inner } or { inner }
    end
    return inner
  end
  local out = {}
  for k, e in pairs(v) do
    out[k] = expand(e)
  end
  return out
end

local failures = {}
for _, c in ipairs(tab.cases) do
  local schema = type(c.schema) == "string" and tab.schemas[c.schema] or c.schema
  local want = c.lua or c.want
  local ok, msg = pcall(validate, schema, expand(c.args))
  local problem
  if not ok then
    problem = "raised " .. tostring(msg)
  elseif want == "ok" then
    problem = msg and ("refused: " .. msg)
  elseif not msg then
    problem = "accepted, want " .. vim.inspect(want)
  else
    for _, class in ipairs(type(want) == "string" and { want } or want) do
      for _, k in ipairs(tab.classes[class].lua) do
        if not msg:find(k, 1, true) then
          problem = string.format("%q, want class %s (containing %q)", msg, class, k)
        end
      end
    end
    if not problem and c.at and not msg:find(c.at, 1, true) then
      problem = string.format("%q, want it to name %s", msg, c.at)
    end
  end
  if problem then
    failures[#failures + 1] = c.name .. ": " .. problem
  end
end
return { ran = #tab.cases, failures = failures }
`

func TestPathTableLua(t *testing.T) {
	runTable(t, "../bufferfs/testdata/paths.json", pathRunner)
}

func TestArgTableLua(t *testing.T) {
	runTable(t, "../runtime/tools/testdata/args.json", argRunner)
}

// runTable runs runner on the table file in a Neovim with flow.tools set
// up for a trusted, empty workspace, and fails for every case it reports,
// or when it did not run every case of the file.
func runTable(t *testing.T, file, runner string) {
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	var tab struct{ Cases []json.RawMessage }
	if err := json.Unmarshal(data, &tab); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	v := editor(t, workspace(t, nil), true)
	out, ok := lua(t, v, runner, abs).(map[string]any)
	if !ok {
		t.Fatalf("the runner returned %#v, want {ran, failures}", out)
	}
	if n := asInt(out["ran"]); n != int64(len(tab.Cases)) {
		t.Errorf("the runner ran %d cases of %s, want all %d", n, file, len(tab.Cases))
	}
	failures, _ := out["failures"].([]any)
	for _, f := range failures {
		t.Error(f)
	}
}
