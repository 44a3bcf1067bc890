package plugin_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neovim/go-client/nvim"

	"flow/internal/test/nvimtest"
	"flow/internal/test/ollamatest"
)

// :FlowReview against flow's real runtime: the test host with --config
// serves agent.Service over the buffer-aware file system and the
// workspace's journal, and a scripted model (ollamatest) makes the run.

// numbered returns n lines "line 1" … "line n" with the lines in edit
// replaced.
func numbered(n int, edit map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := edit[i]; ok {
			b.WriteString(s + "\n")
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	return b.String()
}

// reviewSession starts Neovim in a workspace holding a.txt (30 lines),
// loaded in the current buffer, with flow set up to serve the real
// runtime, and makes a scripted run that changes lines 3 and 25 of a.txt
// through the buffer. It returns Neovim, the workspace and the run report.
func reviewSession(t *testing.T) (*nvim.Nvim, string, map[string]any) {
	t.Helper()
	ws := workspace(t, map[string]string{"a.txt": numbered(30, nil)})
	args, err := json.Marshal(map[string]any{"path": "a.txt", "content": numbered(30, map[int]string{3: "THREE", 25: "TWENTY-FIVE"})})
	if err != nil {
		t.Fatal(err)
	}
	srv := ollamatest.New(t,
		ollamatest.Turn{Content: "1. Change a.txt."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "c1", Name: "file_write", Arguments: string(args)}}},
		ollamatest.Turn{Content: "Changed a.txt."},
		ollamatest.Turn{Content: `{"approved": true, "summary": "looks right", "issues": []}`},
	)
	cfg := filepath.Join(t.TempDir(), "ops.toml")
	toml := fmt.Sprintf(`workspace_dir = %q
[ollama]
base_url = %q
[agent]
planner = "always" # the test scripts a planner turn
max_cycles = 1
[checks.lint]
cmd = ["true"]
kind = "lint"
filetypes = ["*"]
[verify]
behaviour_preserving = true
`, ws, srv.URL)
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	v := withPluginConfig(t, ws, cfg)
	lua(t, v, "vim.cmd('edit a.txt')")
	rep := build(t, v, "change lines 3 and 25 of a.txt")
	if rep["status"] != "ok" || fmt.Sprint(rep["changed_files"]) != "[a.txt]" {
		t.Fatalf("build = %v %v, want ok changing a.txt", rep["status"], rep)
	}
	if got := bufLines(t, v, "a.txt"); got[2] != "THREE" || got[24] != "TWENTY-FIVE" {
		t.Fatalf("a.txt buffer after the run = %v", got)
	}
	return v, ws, rep
}

// withPluginConfig is withPlugin (trusted) with the operator
// configuration cfg, which makes the test host serve the real runtime.
// Notifications are recorded in _G.flow_test_notes as "LEVEL text".
func withPluginConfig(t *testing.T, root, cfg string) *nvim.Nvim {
	t.Helper()
	v := nvimtest.New(t, nvimtest.Options{Dir: root})
	nvimtest.AttachUI(t, v, 80, 40)
	lua(t, v, `require('flow').setup({ cmd = { (select(1, ...)) }, trusted = true, config = select(2, ...),
		log_file = select(3, ...), notify = false, open_run = false })
		_G.flow_test_results = {}
		_G.flow_test_notes = {}
		vim.notify = function(msg, level) table.insert(_G.flow_test_notes, tostring(level) .. ' ' .. msg) end`,
		testHost(t), cfg, filepath.Join(t.TempDir(), "flow.log"))
	return v
}

// reviewMarks returns, for the current buffer, the review's virtual
// lines as "ROW:above|below:TEXT/GROUP|..." (rows 1-based) and the signs
// its lines show on screen as "ROW:sign:TEXT" (nvim_buf_get_extmarks
// reports no signs on 0.7, so they are read from the screen of the
// attached UI, which must show the whole buffer).
func reviewMarks(t *testing.T, v *nvim.Nvim) []string {
	t.Helper()
	out := lua(t, v, `local ns = require('flow.review').ns
		local out = {}
		for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
			local d = m[4]
			if d.virt_lines then
				local texts = {}
				for _, l in ipairs(d.virt_lines) do
					texts[#texts + 1] = l[1][1] .. '/' .. l[1][2]
				end
				out[#out + 1] = (m[2] + 1) .. ':' .. (d.virt_lines_above and 'above' or 'below') .. ':' .. table.concat(texts, '|')
			end
		end
		-- The screen's rows: sign column, then the text of a buffer line
		-- (its lines are unique); 0.7's screenpos() ignores virtual lines.
		local row_of = {}
		for i, l in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
			row_of[l] = i
		end
		vim.cmd('redraw')
		for r = 1, vim.o.lines - 2 do
			local text = ''
			for c = 3, vim.o.columns do
				text = text .. vim.fn.screenstring(r, c)
			end
			local sign = vim.trim(vim.fn.screenstring(r, 1) .. vim.fn.screenstring(r, 2))
			local row = row_of[vim.trim(text)]
			if sign ~= '' and row then
				out[#out + 1] = row .. ':sign:' .. sign
			end
		end
		table.sort(out)
		return out`).([]any)
	var marks []string
	for _, m := range out {
		marks = append(marks, m.(string))
	}
	return marks
}

// quickfix returns the quickfix list as "file:line: text".
func quickfix(t *testing.T, v *nvim.Nvim) []string {
	t.Helper()
	out := lua(t, v, `local out = {}
		for _, it in ipairs(vim.fn.getqflist()) do
			out[#out + 1] = vim.fn.fnamemodify(vim.fn.bufname(it.bufnr), ':t') .. ':' .. it.lnum .. ': ' .. it.text
		end
		return out`).([]any)
	var items []string
	for _, it := range out {
		items = append(items, it.(string))
	}
	return items
}

// plug runs the <Plug> mapping name in normal mode, as a key would.
func plug(t *testing.T, v *nvim.Nvim, name string) {
	t.Helper()
	lua(t, v, `vim.cmd('execute "normal \\<Plug>(' .. select(1, ...) .. ')"')`, name)
}

// notes returns the notifications recorded since the last call.
func notes(t *testing.T, v *nvim.Nvim) string {
	t.Helper()
	return lua(t, v, "local n = table.concat(_G.flow_test_notes, '\\n'); _G.flow_test_notes = {}; return n").(string)
}

// TestPluginReviewRevertsOneHunk: after a run that changed two places of
// a.txt, :FlowReview lists both hunks in the quickfix list and marks them
// in the buffer (signs on the new lines, the old lines as virtual lines
// above them); ]h and [h move between them; <Plug>(flow-review-revert) on
// one puts back its old lines only, as one edit that u undoes; a buffer
// with unsaved changes refuses a revert with a warning and keeps its
// text; <Plug>(flow-review-keep) keeps a hunk.
func TestPluginReviewRevertsOneHunk(t *testing.T) {
	v, ws, run := reviewSession(t)
	lua(t, v, "vim.cmd('FlowReview')")
	rep := lua(t, v, "return require('flow.review').report()").(map[string]any)
	hunks, _ := rep["hunks"].([]any)
	if rep["run_id"] != run["run_id"] || len(hunks) != 2 {
		t.Fatalf(":FlowReview report = %v, want the run's two hunks", rep)
	}
	ids := map[int]string{}
	for _, h := range hunks {
		h := h.(map[string]any)
		ids[int(asInt(h["new_start"]))] = h["id"].(string)
		if h["state"] != "pending" || h["path"] != "a.txt" {
			t.Errorf("hunk %v, want a pending hunk of a.txt", h)
		}
	}
	// Three lines of context: the hunks start at lines 1 and 22.
	if ids[1] == "" || ids[22] == "" {
		t.Fatalf("hunks start at %v, want lines 1 and 22", ids)
	}
	if got := lua(t, v, "return vim.fn.getcompletion('FlowReview ', 'cmdline')"); fmt.Sprint(got) != fmt.Sprintf("[%v]", run["run_id"]) {
		t.Errorf(":FlowReview completion = %v, want the run %v", got, run["run_id"])
	}
	qf := quickfix(t, v)
	if len(qf) != 2 || !strings.HasPrefix(qf[0], "a.txt:1: hunk "+ids[1]+": -1 +1, ") ||
		!strings.HasPrefix(qf[1], "a.txt:22: hunk "+ids[22]+": -1 +1, ") {
		t.Errorf("quickfix = %q, want one entry per hunk at its first line", qf)
	}
	want := []string{"25:above:line 25/FlowReviewDelete", "25:sign:+", "3:above:line 3/FlowReviewDelete", "3:sign:+"}
	if got := reviewMarks(t, v); !slices.Equal(got, want) {
		t.Errorf("marks after :FlowReview = %q, want %q", got, want)
	}
	links := lua(t, v, `local out = {}
		for _, g in ipairs({ 'FlowReviewAdd', 'FlowReviewDelete' }) do
			out[#out + 1] = vim.fn.synIDattr(vim.fn.synIDtrans(vim.fn.hlID(g)), 'name')
		end
		return table.concat(out, ' ')`)
	if links != "DiffAdd DiffDelete" {
		t.Errorf("FlowReviewAdd, FlowReviewDelete link to %v, want DiffAdd DiffDelete", links)
	}

	// ]h and [h, the default buffer-local keys.
	lua(t, v, "vim.api.nvim_win_set_cursor(0, {1, 0})")
	var rows []int64
	for _, key := range []string{"]h", "]h", "]h", "[h"} {
		lua(t, v, "vim.cmd('normal ' .. select(1, ...))", key)
		rows = append(rows, asInt(lua(t, v, "return vim.fn.line('.')")))
	}
	if fmt.Sprint(rows) != "[3 25 3 25]" {
		t.Errorf("lines after ]h ]h ]h [h from line 1 = %v, want [3 25 3 25]", rows)
	}

	// Revert the hunk under the cursor (line 24 is its context).
	lua(t, v, "vim.api.nvim_win_set_cursor(0, {24, 0})")
	plug(t, v, "flow-review-revert")
	if n := notes(t, v); strings.Contains(n, fmt.Sprint(warnLevel(t, v))+" ") {
		t.Errorf("notifications of the revert: %q, want none that warns", n)
	}
	after := numbered(30, map[int]string{3: "THREE"})
	if got := strings.Join(bufferLines(t, v), "\n") + "\n"; got != after {
		t.Errorf("a.txt buffer after the revert =\n%s\nwant only line 25 back", got)
	}
	if got := readFile(t, ws, "a.txt"); got != after {
		t.Errorf("a.txt on disk after the revert = %q", got)
	}
	if m := lua(t, v, "return vim.bo.modified"); m != false {
		t.Errorf("modified after the revert = %v, want false", m)
	}
	want = []string{"3:above:line 3/FlowReviewDelete", "3:sign:+"}
	if got := reviewMarks(t, v); !slices.Equal(got, want) {
		t.Errorf("marks after the revert = %q, want only the other hunk's %q", got, want)
	}
	if qf := quickfix(t, v); len(qf) != 2 || !strings.HasSuffix(qf[1], "[reverted]") || strings.HasSuffix(qf[0], "]") {
		t.Errorf("quickfix after the revert = %q, want the second hunk reverted", qf)
	}

	// u undoes the revert in one step.
	lua(t, v, "vim.cmd('silent normal! u')")
	if got := strings.Join(bufferLines(t, v), "\n") + "\n"; got != numbered(30, map[int]string{3: "THREE", 25: "TWENTY-FIVE"}) {
		t.Errorf("a.txt buffer after u =\n%s\nwant the run's lines back", got)
	}

	// The buffer now has unsaved changes (u made it differ from the
	// file): a revert is refused, with a warning, and changes nothing.
	lua(t, v, "vim.api.nvim_buf_set_lines(0, 11, 12, false, {'my own edit'})")
	before := bufferLines(t, v)
	lua(t, v, "vim.api.nvim_win_set_cursor(0, {3, 0})")
	plug(t, v, "flow-review-revert")
	n := notes(t, v)
	t.Logf("notification of the refused revert: %s", n)
	if !strings.Contains(n, fmt.Sprint(warnLevel(t, v))+" flow review: ") || !strings.Contains(n, "unsaved changes") {
		t.Errorf("notifications of a revert over an unsaved buffer = %q, want a warning about the unsaved changes", n)
	}
	if got := bufferLines(t, v); !slices.Equal(got, before) {
		t.Errorf("a.txt buffer after a refused revert =\n%s\nwant it unchanged", strings.Join(got, "\n"))
	}
	if got := readFile(t, ws, "a.txt"); got != after {
		t.Errorf("a.txt on disk after a refused revert = %q, want unchanged", got)
	}
	if m := lua(t, v, "return vim.bo.modified"); m != true {
		t.Errorf("modified after a refused revert = %v, want true", m)
	}

	// Discard the edits; keep the first hunk: it loses its marks.
	lua(t, v, "vim.cmd('silent edit!'); vim.api.nvim_win_set_cursor(0, {3, 0})")
	plug(t, v, "flow-review-keep")
	if got := reviewMarks(t, v); len(got) != 0 {
		t.Errorf("marks after keeping the last pending hunk = %q, want none", got)
	}
	if qf := quickfix(t, v); len(qf) != 2 || !strings.HasSuffix(qf[0], "[kept]") {
		t.Errorf("quickfix after the keep = %q, want the first hunk kept", qf)
	}
	if got := readFile(t, ws, "a.txt"); got != after {
		t.Errorf("a.txt after keeping a hunk = %q, want unchanged", got)
	}
}

// TestPluginReviewMarksFileOpenedLater: a changed file that no buffer
// showed is marked when it is opened (from the quickfix list); with
// mappings off, reviewed buffers get no keys.
func TestPluginReviewMarksFileOpenedLater(t *testing.T) {
	v, _, _ := reviewSession(t)
	lua(t, v, "require('flow.config').options.mappings = false; vim.cmd('enew'); vim.cmd('bwipeout! a.txt')")
	lua(t, v, "vim.cmd('FlowReview')")
	if qf := quickfix(t, v); len(qf) != 2 {
		t.Fatalf("quickfix = %q, want two hunks", qf)
	}
	lua(t, v, "vim.cmd('silent cfirst')")
	if name := lua(t, v, "return vim.fn.expand('%:t') .. ':' .. vim.fn.line('.')"); name != "a.txt:1" {
		t.Errorf(":cfirst is at %v, want a.txt:1", name)
	}
	want := []string{"25:above:line 25/FlowReviewDelete", "25:sign:+", "3:above:line 3/FlowReviewDelete", "3:sign:+"}
	if got := reviewMarks(t, v); !slices.Equal(got, want) {
		t.Errorf("marks of a.txt opened after :FlowReview = %q, want %q", got, want)
	}
	if m := lua(t, v, "return vim.fn.maparg(']h', 'n')"); m != "" {
		t.Errorf("]h is mapped to %q with mappings = false", m)
	}
}

// TestPluginReviewSummaryOffersReview: a build that ends with a change
// flow did not verify offers :FlowReview in its summary; a verified one
// does not. :FlowReview says why when the host cannot review.
func TestPluginReviewSummaryOffersReview(t *testing.T) {
	ws := workspace(t, map[string]string{"a.go": uiNew})
	v := uiEditor(t, ws, false)
	offer := "review: :FlowReview to keep or revert each hunk"
	rep := map[string]any{"status": "ok", "verified": false, "workspace": ws, "changed_files": []any{"a.go"}, "reason": "No check is required"}
	summary := func(rep map[string]any) string {
		t.Helper()
		out := lua(t, v, "return require('flow.ui').summary('run', ...)", rep).([]any)
		var lines []string
		for _, l := range out {
			if s, ok := l.(string); ok {
				lines = append(lines, s)
			} else {
				lines = append(lines, fmt.Sprint(l.([]any)[0]))
			}
		}
		return strings.Join(lines, "\n")
	}
	if got := summary(rep); !strings.Contains(got, offer) {
		t.Errorf("summary of an unverified change =\n%s\nwant %q", got, offer)
	}
	if got := summary(runWithDiff(t, ws)); strings.Contains(got, ":FlowReview") {
		t.Errorf("summary of a verified change =\n%s\nwant no review offer", got)
	}
	if got := summary(map[string]any{"status": "ok", "verified": false, "workspace": ws, "changed_files": []any{}}); strings.Contains(got, ":FlowReview") {
		t.Errorf("summary of a run without a change =\n%s\nwant no review offer", got)
	}

	// The fake runtime of the test host keeps no journal.
	h := withPlugin(t, ws, true)
	got := lua(t, h, `local msgs = {}
		vim.notify = function(m, l) msgs[#msgs + 1] = tostring(l) .. ' ' .. m end
		vim.cmd('FlowReview')
		return table.concat(msgs, '\n')`)
	if !strings.Contains(got.(string), fmt.Sprint(warnLevel(t, h))+" flow review: the test host's fake runtime keeps no journal") {
		t.Errorf(":FlowReview without a journal notified %q", got)
	}
}

// bufferLines returns the current buffer's lines.
func bufferLines(t *testing.T, v *nvim.Nvim) []string {
	t.Helper()
	var lines []string
	for _, l := range lua(t, v, "return vim.api.nvim_buf_get_lines(0, 0, -1, false)").([]any) {
		lines = append(lines, l.(string))
	}
	return lines
}

// warnLevel is vim.log.levels.WARN.
func warnLevel(t *testing.T, v *nvim.Nvim) int64 {
	t.Helper()
	return asInt(lua(t, v, "return vim.log.levels.WARN"))
}
