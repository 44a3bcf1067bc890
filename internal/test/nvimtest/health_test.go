package nvimtest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/internal/test/nvimtest"
)

// healthDemo is a health module that makes every kind of report, written
// into a temporary runtime directory by the live test (a Lua fixture must
// not sit under plugin/, which Neovim sources).
const healthDemo = `local M = {}
function M.check()
  local h = vim.health
  if not h or not (h.start or h.report_start) then h = require("health") end
  local start, ok, warn, err, info = h.start or h.report_start, h.ok or h.report_ok,
    h.warn or h.report_warn, h.error or h.report_error, h.info or h.report_info
  start("First section")
  ok("binary: /x/flow")
  info("log file: /tmp/flow.log")
  warn("model m: missing", { "pull it", "or pick another" })
  start("Second")
  err("two\nlines", { "do this" })
  info("- starts with a dash")
end
return M
`

// wantHealth is what healthDemo reports, whatever the renderer.
var wantHealth = []nvimtest.HealthItem{
	{Section: "First section", Level: "OK", Text: "binary: /x/flow"},
	{Section: "First section", Level: "INFO", Text: "log file: /tmp/flow.log"},
	{Section: "First section", Level: "WARNING", Text: "model m: missing", Advice: []string{"pull it", "or pick another"}},
	{Section: "Second", Level: "ERROR", Text: "two\nlines", Advice: []string{"do this"}},
	{Section: "Second", Level: "INFO", Text: "- starts with a dash"},
}

// TestParseHealth: the health buffers that Neovim 0.7.2 and 0.10.4 rendered
// for healthDemo (recorded in testdata) parse to the same reports.
func TestParseHealth(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"health-0.7.2.txt", "health-0.10.4.txt"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantHealth, nvimtest.ParseHealth(string(data))); diff != "" {
				t.Errorf("ParseHealth(%s) (-want +got):\n%s", name, diff)
			}
		})
	}
}

// TestNvimHealthParsesLive: the running Neovim's own rendering of
// healthDemo parses to the same reports, so a renderer change shows here
// first rather than as a confusing failure of flow's health test.
func TestNvimHealthParsesLive(t *testing.T) {
	t.Parallel()
	rtp := t.TempDir()
	if err := os.MkdirAll(filepath.Join(rtp, "lua", "healthdemo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rtp, "lua", "healthdemo", "health.lua"), []byte(healthDemo), 0o644); err != nil {
		t.Fatal(err)
	}
	v := nvimtest.New(t, nvimtest.Options{NoPlugin: true})
	nvimtest.Exec(t, v, "vim.opt.runtimepath:prepend(...)", rtp)
	got, text := nvimtest.Health(t, v, "healthdemo")
	if diff := cmp.Diff(wantHealth, got); diff != "" {
		t.Errorf("checkhealth healthdemo =\n%s\nparsed (-want +got):\n%s", text, diff)
	}
}
