package plugin_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neovim/go-client/nvim"

	"flow/internal/test/nvimtest"
	"flow/runtime/diff"
	"flow/runtime/report"
)

// Tests of flow.ui in a real Neovim, fed with reports as the host sends
// them (the diffs made by runtime/diff): flow://run, :FlowDiff, the
// quickfix list and the notification.

// uiEditor starts Neovim in root with flow set up without a host.
func uiEditor(t *testing.T, root string, notify bool) *nvim.Nvim {
	t.Helper()
	v := nvimtest.New(t, nvimtest.Options{Dir: root})
	lua(t, v, "require('flow').setup({ workspace = select(1, ...), notify = select(2, ...), log_file = select(3, ...) })",
		root, notify, filepath.Join(t.TempDir(), "flow.log"))
	return v
}

// asMap turns a report into the table the host would send.
func asMap(t *testing.T, rep any) map[string]any {
	t.Helper()
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const (
	uiOld = "package a\n\nimport \"fmt\"\n\nfunc Old() {}\n\nfunc main() { fmt.Println() }\n"
	uiNew = "package a\n\nimport \"fmt\"\n\nfunc New() {}\n\nfunc main() { fmt.Println() }\n"
)

// runWithDiff is an ok run report that changed a.go at line 5.
func runWithDiff(t *testing.T, ws string) map[string]any {
	t.Helper()
	d := diff.File("a.go", []byte(uiOld), []byte(uiNew), true, true, 0)
	if fmt.Sprint(d.Hunks) != "[5]" {
		t.Fatalf("diff.File hunks = %v, want [5]", d.Hunks)
	}
	rep := asMap(t, report.Run{Status: "ok", Verified: true, Task: "rename", Workspace: ws, ChangedFiles: []string{"a.go"}})
	rep["diffs"] = []any{asMap(t, d)}
	return rep
}

// bufferText returns the lines of the buffer named name.
func bufferText(t *testing.T, v *nvim.Nvim, name string) []string {
	t.Helper()
	out := lua(t, v, "return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", "^"+name+"$")
	var lines []string
	for _, l := range out.([]any) {
		lines = append(lines, l.(string))
	}
	return lines
}

// TestPluginUIRunShowsDiff: a run report with diffs shows each diff in flow://run
// with the FlowDiff* highlights (linked to DiffAdd/DiffDelete), quickfix
// entries at the hunk's first changed line, and :FlowDiff shows the hunk in
// a diff buffer.
func TestPluginUIRunShowsDiff(t *testing.T) {
	t.Parallel()
	ws := workspace(t, map[string]string{"a.go": uiNew})
	v := uiEditor(t, ws, false)
	rep := runWithDiff(t, ws)
	rep["host_edits"] = []any{map[string]any{"cycle": 1, "path": "a.go", "what": "imports: adds `fmt`", "status": "ok"}}
	lua(t, v, "require('flow').last_run = ...; require('flow.ui').on_done('run', ...)", rep)

	run := bufferText(t, v, "flow://run")
	text := strings.Join(run, "\n")
	for _, want := range []string{"flow run: ok (verified)", "changed: a.go (modified, +1 -1)", "changed by flow itself: a.go (cycle 1): imports: adds `fmt`", "@@ -2,6 +2,6 @@", "-func Old() {}", "+func New() {}"} {
		if !strings.Contains(text, want) {
			t.Errorf("flow://run =\n%s\nwant %q", text, want)
		}
	}
	// The highlight of each diff line.
	hl := lua(t, v, `local b = vim.fn.bufnr('^flow://run$')
		local ns = vim.api.nvim_create_namespace('flow_run')
		local out = {}
		for _, m in ipairs(vim.api.nvim_buf_get_extmarks(b, ns, 0, -1, { details = true })) do
			local line = vim.api.nvim_buf_get_lines(b, m[2], m[2] + 1, false)[1]
			out[line] = m[4].hl_group
		end
		return out`).(map[string]any)
	for line, group := range map[string]string{"+func New() {}": "FlowDiffAdd", "-func Old() {}": "FlowDiffDelete", "@@ -2,6 +2,6 @@": "FlowDiffHunk"} {
		if hl[line] != group {
			t.Errorf("highlight of %q in flow://run = %v, want %s", line, hl[line], group)
		}
	}
	links := lua(t, v, `local out = {}
		for _, g in ipairs({ 'FlowDiffAdd', 'FlowDiffDelete' }) do
			out[g] = vim.fn.synIDattr(vim.fn.synIDtrans(vim.fn.hlID(g)), 'name')
		end
		return out`).(map[string]any)
	if links["FlowDiffAdd"] != "DiffAdd" || links["FlowDiffDelete"] != "DiffDelete" {
		t.Errorf("FlowDiffAdd/FlowDiffDelete link to %v, want DiffAdd/DiffDelete", links)
	}

	qf := lua(t, v, `local out = {}
		for _, it in ipairs(vim.fn.getqflist()) do
			out[#out + 1] = vim.fn.fnamemodify(vim.fn.bufname(it.bufnr), ':t') .. ':' .. it.lnum .. ': ' .. it.text
		end
		return out`).([]any)
	if len(qf) != 1 || !strings.HasPrefix(qf[0].(string), "a.go:5: modified by flow") {
		t.Errorf("quickfix = %v, want a.go at line 5, the hunk's first changed line", qf)
	}

	lua(t, v, "vim.cmd('FlowDiff')")
	cur := lua(t, v, "return { vim.api.nvim_buf_get_name(0), vim.bo.filetype, vim.bo.modifiable }").([]any)
	if cur[0] != "flow://diff" || cur[1] != "diff" || cur[2] != false {
		t.Errorf(":FlowDiff current buffer = %v, want flow://diff, filetype diff, not modifiable", cur)
	}
	got := strings.Join(bufferText(t, v, "flow://diff"), "\n")
	if want := strings.TrimSuffix(rep["diffs"].([]any)[0].(map[string]any)["diff"].(string), "\n"); got != want {
		t.Errorf(":FlowDiff buffer =\n%s\nwant the report's diff\n%s", got, want)
	}
	// A second :FlowDiff reuses the buffer.
	lua(t, v, "vim.cmd('wincmd p'); vim.cmd('FlowDiff')")
	if n := lua(t, v, "return #vim.tbl_filter(function(b) return vim.api.nvim_buf_get_name(b) == 'flow://diff' end, vim.api.nvim_list_bufs())"); asInt(n) != 1 {
		t.Errorf("flow://diff buffers after two :FlowDiff = %v, want 1", n)
	}
}

// TestPluginUIFlowDiffWithoutRun: :FlowDiff before any run says so in one line.
func TestPluginUIFlowDiffWithoutRun(t *testing.T) {
	t.Parallel()
	ws := workspace(t, map[string]string{"a.go": uiNew})
	v := uiEditor(t, ws, false)
	lua(t, v, "require('flow').last_run = { status = 'ok', changed_files = {}, diffs = {} }; vim.cmd('FlowDiff')")
	if name := lua(t, v, "return vim.api.nvim_buf_get_name(0)"); name == "flow://diff" {
		t.Error(":FlowDiff after a run that changed nothing opened a diff buffer")
	}
	msgs := lua(t, v, "return vim.api.nvim_exec('messages', true)").(string)
	if !strings.Contains(msgs, "flow: the last run changed no file") {
		t.Errorf(":messages = %q, want the note that the last run changed nothing", msgs)
	}
}

// TestPluginUICheckOutputInQuickfix: the output of a failing check goes into the
// quickfix list through flow's 'errorformat', for the test and lint output
// of Go, Python, TypeScript and JavaScript; names of files that do not
// exist are dropped.
func TestPluginUICheckOutputInQuickfix(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for _, f := range []string{"calc_test.go", "calc.go", "pkg/deep_test.go", "test_calc.py", "src/app.ts", "calc.test.js", "lint.js"} {
		files[f] = strings.Repeat("x\n", 20)
	}
	ws := workspace(t, files)
	v := uiEditor(t, ws, false)
	cases := []struct {
		name, output string
		want         []string // file:line[:col]
	}{
		{"go test", "--- FAIL: TestAdd (0.00s)\n    calc_test.go:7: Add(2, 3) = -1, want 5\nFAIL\nFAIL\texample.com/calc\t0.002s\n",
			[]string{"calc_test.go:7"}},
		{"go test in a package", "--- FAIL: TestDeep (0.00s)\n    deep_test.go:12: boom\nFAIL\texample.com/calc/pkg\n",
			[]string{"pkg/deep_test.go:12"}},
		{"go vet", "# example.com/calc\n./calc.go:5:2: fmt.Printf format %d has arg x of wrong type string\n./gone.go:1:1: not here\n",
			[]string{"calc.go:5:2"}},
		{"python unittest", "Traceback (most recent call last):\n  File \"" + ws + "/test_calc.py\", line 9, in test_add\n    self.assertEqual(add(2, 3), 5)\nAssertionError: -1 != 5\n",
			[]string{"test_calc.py:9"}},
		{"pytest", "test_calc.py:14: AssertionError\n==== 1 failed in 0.01s ====\n", []string{"test_calc.py:14"}},
		{"tsc", "src/app.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.\n", []string{"src/app.ts:3:5"}},
		{"tsc --pretty", "src/app.ts:4:7 - error TS2322: Type 'string' is not assignable.\n", []string{"src/app.ts:4:7"}},
		{"node --test", "not ok 1 - adds\n  ---\n  location: '" + ws + "/calc.test.js:8:1'\n  stack: |-\n    TestContext.<anonymous> (file://" + ws + "/calc.test.js:9:10)\n    at node:internal/test_runner/test:583:25\n",
			[]string{"calc.test.js:8:1"}},
		{"node stack", "AssertionError [ERR_ASSERTION]: 1 == 2\n    at Object.<anonymous> (" + ws + "/calc.test.js:11:3)\n    at Module._compile (node:internal/modules/cjs/loader:1256:14)\n",
			[]string{"calc.test.js:11:3"}},
		{"eslint", ws + "/lint.js\n  3:5  error  'x' is assigned a value but never used  no-unused-vars\n\n✖ 1 problem (1 error, 0 warnings)\n",
			[]string{"lint.js:3:5"}},
		{"eslint -f unix", "lint.js:6:1: Unexpected console statement. [Error/no-console]\n", []string{"lint.js:6:1"}},
	}
	for _, tc := range cases {
		rep := map[string]any{"status": "failed", "verified": false, "workspace": ws, "reason": "check test failed",
			"checks": []any{map[string]any{"name": "test", "status": "failed", "returncode": 1, "stdout": tc.output, "stderr": ""}}}
		out := lua(t, v, `require('flow.ui').on_done('check', ...)
			local root = select(1, ...).workspace .. '/'
			local out = {}
			for _, it in ipairs(vim.fn.getqflist()) do
				local name = vim.api.nvim_buf_get_name(it.bufnr):sub(#root + 1)
				out[#out + 1] = name .. ':' .. it.lnum .. (it.col > 0 and (':' .. it.col) or '')
			end
			return out`, rep).([]any)
		if got := fmt.Sprint(out); got != fmt.Sprint(tc.want) {
			t.Errorf("%s: quickfix = %v, want %v", tc.name, got, tc.want)
		}
	}
	// :cfirst jumps to the failing test line.
	rep := map[string]any{"status": "failed", "workspace": ws, "checks": []any{map[string]any{"name": "test", "status": "failed",
		"returncode": 1, "stdout": cases[0].output}}}
	lua(t, v, "require('flow.ui').on_done('check', ...); vim.cmd('silent cfirst')", rep)
	at := lua(t, v, "return vim.fn.expand('%:t') .. ':' .. vim.fn.line('.')")
	if at != "calc_test.go:7" {
		t.Errorf(":cfirst after a failing check is at %v, want calc_test.go:7", at)
	}
	// A name below a workspace whose path holds a space and a comma.
	odd := workspace(t, map[string]string{"my proj,1/pkg/odd_test.go": "x\nx\nx\n"})
	got := lua(t, v, `local items = require('flow.ui').check_items({ name = 'test', stdout = '    odd_test.go:3: boom' }, select(1, ...))
		return #items == 1 and items[1].filename .. ':' .. items[1].lnum or vim.inspect(items)`, filepath.Join(odd, "my proj,1"))
	if want := filepath.Join(odd, "my proj,1", "pkg", "odd_test.go") + ":3"; got != want {
		t.Errorf("check_items in a workspace with a space and a comma = %v, want %s", got, want)
	}
	// Parsing leaves no buffer behind for names that are not files.
	if n := lua(t, v, "return vim.fn.bufnr('gone.go')"); asInt(n) != -1 {
		t.Errorf("a buffer for gone.go exists (%v) after parsing check output", n)
	}
}

// TestPluginUIFailingCheckTail: the tail of a failing check's output is in
// flow://run and in the log file :FlowLog opens.
func TestPluginUIFailingCheckTail(t *testing.T) {
	t.Parallel()
	ws := workspace(t, map[string]string{"calc_test.go": "package calc\n"})
	v := uiEditor(t, ws, false)
	var long []string
	for i := 1; i <= 50; i++ {
		long = append(long, fmt.Sprintf("noise %d", i))
	}
	out := strings.Join(long, "\n") + "\n    calc_test.go:7: Add(2, 3) = -1, want 5\nFAIL\n"
	rep := map[string]any{"status": "failed", "verified": false, "workspace": ws, "reason": "Check test failed with exit code 1",
		"checks": []any{
			map[string]any{"name": "lint", "status": "ok", "returncode": 0, "stdout": "all good"},
			map[string]any{"name": "test", "status": "failed", "returncode": 1, "stdout": out, "stderr": "exit status 1\n"},
		}}
	lua(t, v, "require('flow.ui').on_done('check', ...)", rep)
	run := strings.Join(bufferText(t, v, "flow://run"), "\n")
	for _, want := range []string{"reason: Check test failed with exit code 1", "check test: failed (exit 1)", "  calc_test.go:7: Add(2, 3) = -1, want 5", "  exit status 1", "noise 33"} {
		if !strings.Contains(run, want) {
			t.Errorf("flow://run =\n%s\nwant %q", run, want)
		}
	}
	if strings.Contains(run, "noise 32\n") || strings.Contains(run, "all good") || strings.Contains(run, "check lint") {
		t.Errorf("flow://run =\n%s\nwant only the last lines of the failing check", run)
	}
	lua(t, v, "vim.cmd('FlowLog')")
	log := lua(t, v, "return { vim.fn.line('.') == vim.fn.line('$'), table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n') }").([]any)
	if log[0] != true || !strings.Contains(log[1].(string), "check test: failed (exit 1)") || !strings.Contains(log[1].(string), "    calc_test.go:7: Add(2, 3) = -1, want 5") {
		t.Errorf(":FlowLog (at the end: %v) =\n%s\nwant the failing check's tail", log[0], log[1])
	}
}

// TestPluginUINotificationLeadsWithReason: the notification is one line leading
// with the report's reason, cut to the command line with a UI attached, so
// no hit-enter prompt follows even for a long multi-line reason; a reason
// about unsaved buffers that names no file names the unsaved buffer and
// says to save or discard it; an undo conflict names the file; wording
// meant for the model is removed.
func TestPluginUINotificationLeadsWithReason(t *testing.T) {
	t.Parallel()
	ws := workspace(t, map[string]string{"a.go": uiOld})
	v := uiEditor(t, ws, true)
	nvimtest.AttachUI(t, v, 80, 24)

	notify := func(op string, rep map[string]any) string {
		t.Helper()
		lua(t, v, "vim.cmd('messages clear'); require('flow.ui').on_done(...)", op, rep)
		nvimtest.NoPrompt(t, v)
		msgs := strings.TrimSpace(lua(t, v, "return vim.api.nvim_exec('messages', true)").(string))
		if strings.Contains(msgs, "\n") {
			t.Errorf("%s notification = %q, want one line", op, msgs)
		}
		return msgs
	}

	long := "Check test failed with exit code 1: " + strings.Repeat("the output was long ", 20) + "\nand had a second line"
	msg := notify("run", map[string]any{"status": "failed", "verified": false, "workspace": ws, "reason": long,
		"error": "an unrelated error", "roles": []any{map[string]any{"role": "reviewer", "summary": "Approved."}}})
	if !strings.HasPrefix(msg, "flow build failed: Check test failed with exit code 1: the output") || !strings.HasSuffix(msg, "…") {
		t.Errorf("notification of a failed run = %q, want the reason first, cut", msg)
	}
	if w := asInt(lua(t, v, "return vim.fn.strdisplaywidth(...)", msg)); w >= 80 {
		t.Errorf("notification is %d columns wide, want it to fit the 80-column command line", w)
	}

	lua(t, v, "vim.cmd('edit a.go'); vim.api.nvim_buf_set_lines(0, 0, 0, false, {'// mine'})")
	msg = notify("run", map[string]any{"status": "stale", "verified": false, "workspace": ws,
		"reason": "Unsaved editor buffers would not be checked; save them manually first"})
	if !strings.Contains(msg, "a.go") || !strings.Contains(msg, "save or discard") {
		t.Errorf("notification of a run refused over an unsaved buffer = %q, want a.go and \"save or discard\"", msg)
	}

	// A reason naming the file but too long for the command line gives way
	// to the editor's shorter sentence.
	msg = notify("run", map[string]any{"status": "stale", "verified": false, "workspace": ws,
		"reason": "a.go has unsaved changes in Neovim, so the checks would not see what the run wrote: save or discard it, then run flow again"})
	if msg != "flow build stale: a.go has unsaved changes: save or discard it" {
		t.Errorf("notification of a long unsaved-buffer reason = %q", msg)
	}
	msg = notify("run", map[string]any{"status": "ok", "verified": false, "workspace": ws, "changed_files": []any{"a.go"},
		"reason": "No check is required"})
	if msg != "flow build ok, not verified: No check is required" {
		t.Errorf("notification of an unverified run = %q, want the reason it is not verified", msg)
	}

	msg = notify("undo", map[string]any{"status": "error", "workspace": ws, "error": "some files could not be restored",
		"conflicts": []any{map[string]any{"path": "a.go", "reason": "file has unsaved changes in Neovim (buffer 1): save or discard them first, or ask the user to; the file was not written"}}})
	if msg != "flow undo error: a.go has unsaved changes: save or discard it" || strings.Contains(msg, "ask the user") {
		t.Errorf("notification of a refused undo = %q, want the file and no wording for the model", msg)
	}

	rep := runWithDiff(t, ws)
	msg = notify("run", rep)
	if msg != "flow build ok, verified: changed a.go +1 -1" {
		t.Errorf("notification of an ok run = %q", msg)
	}
}

// TestPluginUIReviewerNote: a run whose measured reviewer does not
// discriminate shows the report's reviewer warning next to its verdict in
// flow://run (doc/design.md §8.10).
func TestPluginUIReviewerNote(t *testing.T) {
	t.Parallel()
	ws := workspace(t, map[string]string{"calc.go": "package calc\n"})
	v := uiEditor(t, ws, false)
	warning := "The reviewer's verdict carries little weight: flow doctor --reviewer measured trust 0% + approval 100%, below the 130% of a reviewer that tells right from wrong."
	rep := map[string]any{"status": "ok", "verified": true, "workspace": ws, "changed_files": []any{"calc.go"},
		"reviewer": map[string]any{"model": "rev:1b", "warning": warning}}
	lua(t, v, "require('flow.ui').on_done('build', ...)", rep)
	run := strings.Join(bufferText(t, v, "flow://run"), "\n")
	if !strings.Contains(run, "note: "+warning) {
		t.Errorf("flow://run =\n%s\nwant the reviewer's note", run)
	}
	delete(rep["reviewer"].(map[string]any), "warning")
	lua(t, v, "require('flow.ui').on_done('build', ...)", rep)
	run = strings.Join(bufferText(t, v, "flow://run"), "\n")
	if last := run[strings.LastIndex(run, "flow build:"):]; strings.Contains(last, "note:") {
		t.Errorf("flow://run without a warning =\n%s", run)
	}
}
