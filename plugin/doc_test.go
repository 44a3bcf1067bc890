package plugin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/internal/test/nvimtest"
)

// :helptags succeeds on doc/flow.txt (a duplicate tag is an error), and
// every command, option and Lua function has a tag.
func TestHelpTags(t *testing.T) {
	v := nvimtest.New(t, nvimtest.Options{})
	src, err := os.ReadFile(filepath.Join(nvimtest.RepoRoot(t), "doc", "flow.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(src), "\n"), "\n")
	if !strings.HasPrefix(lines[0], "*flow.txt*") {
		t.Errorf("first line = %q, want *flow.txt* and a summary", lines[0])
	}
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "vim:tw=78:ts=8:ft=help:norl:" {
		t.Errorf("last line = %q, want the help modeline", last)
	}
	// Run :helptags on a copy, so the repository gets no tags file.
	doc := filepath.Join(t.TempDir(), "doc")
	if err := os.Mkdir(doc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(doc, "flow.txt"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	lua(t, v, "vim.cmd('helptags ' .. vim.fn.fnameescape(...))", doc)
	data, err := os.ReadFile(filepath.Join(doc, "tags"))
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if name, _, ok := strings.Cut(l, "\t"); ok {
			tags[name] = true
		}
	}
	want := []string{"flow.txt", "flow", "flow-requirements", "flow-setup", "flow.setup()", "flow-config",
		"flow-commands", "flow-mappings", "flow-api", "flow-mcp", "flow-health", "flow-logs", "flow-tools",
		"flow.build()", "flow.check()", "flow.status()", "flow.stop()", "flow.undo()", "flow.last_report",
		"flow.tools.setup()", "flow.tools.schemas()", "flow.tools.call()",
		"<Plug>(flow-build)", "<Plug>(flow-check)", "<Plug>(flow-stop)"}
	for _, c := range lua(t, v, "return vim.tbl_keys(vim.api.nvim_get_commands({}))").([]any) {
		if strings.HasPrefix(c.(string), "Flow") {
			want = append(want, ":"+c.(string))
		}
	}
	for _, k := range lua(t, v, "return require('flow.config').keys()").([]any) {
		want = append(want, "flow-config-"+k.(string))
	}
	for _, m := range lua(t, v, "local l = {} for k, v in pairs(require('flow')) do if type(v) == 'function' and k ~= 'setup' then l[#l+1] = k end end return l").([]any) {
		want = append(want, "flow."+m.(string)+"()")
	}
	maps := lua(t, v, "local l = {} for _, m in ipairs(vim.api.nvim_get_keymap('n')) do if m.lhs:find('flow') then l[#l+1] = m.lhs end end return l").([]any)
	if len(maps) == 0 {
		t.Error("no <Plug>(flow-...) mappings defined")
	}
	for _, m := range maps {
		want = append(want, m.(string))
	}
	for _, w := range want {
		if !tags[w] {
			t.Errorf("doc/flow.txt has no tag *%s*", w)
		}
	}
}
