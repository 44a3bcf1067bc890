package plugin_test

import (
	"strings"
	"testing"
)

// TestToolsEditorOnlyTools: editor_lint and editor_check, which the editor
// contract lists but only Rose implements, are not advertised by flow.tools
// (TestToolsSchemas) and, when called anyway, are unavailable with the
// reason and what to use instead — also for a trusted editor and with
// arguments the contract allows.
func TestToolsEditorOnlyTools(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "package a\n"})
	v := editor(t, root, true)
	for tool, want := range map[string][]string{
		"editor_lint":  {"Diver", "editor_diagnostics", "flow's own checks"},
		"editor_check": {"checks configured in the editor", "[checks.NAME]"},
	} {
		res := lua(t, v, "return require('flow.tools').call(...)", tool, map[string]any{"path": "a.go"}).(map[string]any)
		if res["status"] != "unavailable" {
			t.Errorf("call(%s) status = %v, want unavailable", tool, res["status"])
		}
		msg, _ := res["error"].(string)
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("call(%s) error = %q, want it to mention %q", tool, msg, w)
			}
		}
	}
}
