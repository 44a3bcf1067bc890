package verify

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/runtime/config"
)

func TestOnboarding(t *testing.T) {
	lint := config.Check{Name: "vet", Kind: "lint", Required: true, Filetypes: []string{"go"}}
	test := config.Check{Name: "test", Kind: "test", Required: true, Filetypes: []string{"go"}}
	files := []string{"go.mod", "calc.go", "calc_test.go", "tools/gen.py", "README.md", "web/app.ts", "web/util.ts", "logo.png"}
	for _, tc := range []struct {
		name      string
		workspace string
		path      string
		checks    []config.Check
		want      []string
	}{
		{"all good", "/src/p", "/etc/flow.toml", []config.Check{lint, test, {Name: "all", Kind: "lint", Required: true, Filetypes: []string{"*"}}}, nil},
		{"no file, no checks", "/src/p", "", nil, []string{
			"No configuration file was loaded, so flow runs on its defaults with no checks: create /home/u/.config/flow/config.toml or pass --config FILE",
			"No checks are configured, so runs cannot be verified: add [checks.NAME] tables with the project's test and lint commands",
		}},
		{"nothing required", "/src/p", "/etc/flow.toml", []config.Check{{Name: "t", Kind: "test"}}, []string{
			"No check is required, so runs cannot be verified: set required = true on the project's test and lint checks",
		}},
		{"languages without lint", "/src/p", "/etc/flow.toml", []config.Check{lint, test}, []string{
			`No lint check covers the typescript files in this workspace, so edits to them cannot be verified: add a required check with kind = "lint" and filetypes = ["typescript"]`,
			`No lint check covers the python files in this workspace, so edits to them cannot be verified: add a required check with kind = "lint" and filetypes = ["python"]`,
		}},
		{"a test check is no lint", "/src/p", "/etc/flow.toml", []config.Check{test, {Name: "l", Kind: "lint", Required: true, Filetypes: []string{".py", "typescript"}}}, []string{
			`No lint check covers the go files in this workspace, so edits to them cannot be verified: add a required check with kind = "lint" and filetypes = ["go"]`,
		}},
		{"root", "/", "/etc/flow.toml", []config.Check{{Name: "all", Kind: "lint", Required: true, Filetypes: []string{"*"}}}, []string{
			"The workspace is the root directory /: pass --workspace with a project directory",
		}},
		{"home", "/home/u/", "/etc/flow.toml", []config.Check{{Name: "all", Kind: "lint", Required: true, Filetypes: []string{"*"}}}, []string{
			"The workspace is your home directory /home/u: pass --workspace with a project directory",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Workspace, cfg.ConfigPath, cfg.Checks = tc.workspace, tc.path, tc.checks
			got := Onboarding(&cfg, files, "/home/u", "/home/u/.config/flow/config.toml")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("Onboarding (-want +got):\n%s", diff)
			}
		})
	}
}
