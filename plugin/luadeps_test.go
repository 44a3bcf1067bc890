package plugin_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// luaRequire finds require("flow...") and require('flow...') calls.
var luaRequire = regexp.MustCompile(`require\(\s*["'](flow[\w.]*)["']\s*\)`)

// luaModules maps every module under lua/flow to the flow modules it
// requires.
func luaModules(t *testing.T) map[string][]string {
	t.Helper()
	root := filepath.Join("..", "lua")
	mods := map[string][]string{}
	err := filepath.WalkDir(filepath.Join(root, "flow"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".lua") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		name := strings.TrimSuffix(filepath.ToSlash(rel), ".lua")
		name = strings.TrimSuffix(strings.ReplaceAll(name, "/", "."), ".init")
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		deps := []string{}
		for _, m := range luaRequire.FindAllStringSubmatch(string(src), -1) {
			if m[1] != name && !slices.Contains(deps, m[1]) {
				deps = append(deps, m[1])
			}
		}
		mods[name] = deps
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return mods
}

// TestLuaModulesRequireOneWay keeps the Lua modules acyclic and the RPC
// channel at the bottom: plugin/flow.lua → flow.commands → flow →
// flow.rpc / flow.ui; flow.rpc never reaches up into flow or flow.ui (job
// events reach the UI through the callbacks its caller passes).
func TestLuaModulesRequireOneWay(t *testing.T) {
	mods := luaModules(t)
	for _, low := range []string{"flow.rpc", "flow.ui", "flow.config", "flow.log"} {
		for _, dep := range mods[low] {
			if dep == "flow" || dep == "flow.commands" || (low == "flow.rpc" && dep == "flow.ui") {
				t.Errorf("%s requires %s: the dependency must point the other way", low, dep)
			}
		}
	}
	if slices.Contains(mods["flow"], "flow.commands") {
		t.Error("flow requires flow.commands: the commands sit on the public API, not under it")
	}
	// No cycles at all.
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(m string, path []string)
	visit = func(m string, path []string) {
		switch state[m] {
		case 1:
			t.Errorf("Lua require cycle: %s", strings.Join(append(path, m), " → "))
			return
		case 2:
			return
		}
		state[m] = 1
		for _, d := range mods[m] {
			visit(d, append(path, m))
		}
		state[m] = 2
	}
	for m := range mods {
		visit(m, nil)
	}
}

// TestResultBeforeRequestReturns: a job's result that arrives while its
// request is still waiting for the host's answer (the host pushes it
// before the answer is read) reaches the job's on_done exactly once,
// because Lua registered the job under its own token before sending. The
// host channel is replaced by a stub that pushes the result first.
func TestResultBeforeRequestReturns(t *testing.T) {
	root := workspace(t, nil)
	v := editor(t, root, true)
	got := lua(t, v, `
local rpc = require("flow.rpc")
rpc.start = function() return 42 end
local sent
local real = vim.rpcrequest
vim.rpcrequest = function(chan, method, arg, token)
  sent = { chan = chan, method = method, arg = arg, token = token }
  rpc.on_event({ token = token, op = "run", kind = "event", text = "run      start" })
  rpc.on_event({ token = token, op = "run", kind = "done", result = { status = "ok", run_id = "r1" } })
  return { status = "started", token = token }
end
local events, done = {}, {}
local token = rpc.job("run", rpc.methods.run, "t", {
  on_event = function(p) events[#events + 1] = p.text end,
  on_done = function(r) done[#done + 1] = r.run_id end,
})
vim.rpcrequest = real
return { token = token, sent = sent.token, method = sent.method, events = events, done = done }
`)
	m, _ := got.(map[string]any)
	if m == nil || asInt(m["token"]) <= 0 || asInt(m["token"]) != asInt(m["sent"]) || m["method"] != "flow_run" {
		t.Fatalf("job = %v, want the token Lua minted and sent with flow_run", got)
	}
	if ev, _ := m["events"].([]any); len(ev) != 1 || ev[0] != "run      start" {
		t.Errorf("events = %v, want the one early event", m["events"])
	}
	if done, _ := m["done"].([]any); len(done) != 1 || done[0] != "r1" {
		t.Errorf("on_done results = %v, want the early result exactly once", m["done"])
	}
}
