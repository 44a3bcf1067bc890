package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/plugin"
)

func TestParseArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		argv []string
		want options
	}{
		{"no command is the tui", nil, options{}},
		{"flags before", []string{"--trusted", "-c", "/x.toml", "check"}, options{command: "check", trusted: true, configFile: "/x.toml"}},
		{"flags after", []string{"check", "--trusted", "--config=/x.toml", "tests"}, options{command: "check", trusted: true, configFile: "/x.toml", args: []string{"tests"}}},
		{"later flag wins", []string{"-w", "a", "status", "--workspace", "b"}, options{command: "status", workspace: "b"}},
		{"run joins words", []string{"run", "fix", "the", "bug", "-m", "m1"}, options{command: "run", args: []string{"fix", "the", "bug"}, model: "m1", modelSet: true}},
		{"double dash keeps flags as task", []string{"run", "--", "--trusted", "x"}, options{command: "run", args: []string{"--trusted", "x"}}},
		{"check --name", []string{"check", "--name", "lint"}, options{command: "check", name: "lint"}},
		{"editor flags", []string{"serve", "--nvim", "/tmp/s", "--editor-timeout", "0.1", "--editor-module", "my.tools"}, options{command: "serve", nvim: "/tmp/s", editorTimeout: 0.1, editorModule: "my.tools"}},
		{"version flag", []string{"--version"}, options{version: true}},
		{"quiet", []string{"run", "-q", "t"}, options{command: "run", quiet: true, args: []string{"t"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseArgs(tc.argv)
			if err != nil {
				t.Fatalf("parseArgs(%q) error = %v", tc.argv, err)
			}
			want := tc.want
			if want.editorTimeout == 0 {
				want.editorTimeout = 120
			}
			if diff := cmp.Diff(want, *got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("parseArgs(%q) mismatch (-want +got):\n%s", tc.argv, diff)
			}
		})
	}
}

func TestParseArgsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"bogus"}, "unknown command"},
		{[]string{"stauts"}, `unknown command "stauts": did you mean "status"? (see flow help)`},
		{[]string{"chek", "vet"}, `did you mean "check"?`},
		{[]string{"--bogus"}, "unknown flag --bogus"},
		{[]string{"serve", "--json"}, "--json is only valid with run, check, status, undo, review, doctor and tasks"},
		{[]string{"status", "--json=yes"}, "takes no value"},
		{[]string{"status", "-x"}, "unknown flag -x"},
		{[]string{"run"}, "run needs a task"},
		{[]string{"status", "extra"}, "status takes no arguments"},
		{[]string{"check", "a", "b"}, "check takes at most one argument"},
		{[]string{"status", "-c"}, "flag -c needs a value"},
		{[]string{"status", "--trusted=yes"}, "takes no value"},
		{[]string{"status", "--editor-timeout", "0.05"}, "--editor-timeout must be between 0.1 and 660 seconds"},
		{[]string{"status", "--editor-timeout", "661"}, "between 0.1 and 660"},
		{[]string{"status", "--editor-timeout", "NaN"}, "between 0.1 and 660"},
		{[]string{"status", "--editor-timeout", "soon"}, "between 0.1 and 660"},
		{[]string{"status", "--editor-module", "x');os.exit()--"}, "Lua module name"},
		{[]string{"status", "-m", "  "}, "--model must be a nonempty"},
		{[]string{"run", "--version", "x"}, "--version is not valid with run"},
		{[]string{"status", "--name", "x"}, "--name is only valid with check"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.argv, " "), func(t *testing.T) {
			_, err := parseArgs(tc.argv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parseArgs(%q) error = %v, want containing %q", tc.argv, err, tc.want)
			}
		})
	}
}

// TestEveryCommandHasAHandler keeps the grammar and the dispatch in step.
func TestEveryCommandHasAHandler(t *testing.T) {
	t.Parallel()
	direct := map[string]bool{"help": true, "version": true, "serve": true, "tui": true, "nvim": true, "tasks": true}
	for _, name := range commandNames() {
		if _, ok := reportCommands[name]; ok == direct[name] {
			t.Errorf("command %q: report handler %v, handled directly %v; want exactly one", name, ok, direct[name])
		}
	}
}

// TestUsageListsTheTables keeps usage.txt in step with the command and flag
// tables: every listed command and every flag spelling is in the help.
func TestUsageListsTheTables(t *testing.T) {
	t.Parallel()
	for _, name := range commandNames() {
		if !strings.Contains(usageText, "\n  "+name+" ") {
			t.Errorf("usage.txt does not list the command %q", name)
		}
	}
	for _, name := range flagNames() {
		if name == "--help" || name == "-h" {
			continue // help is the command that prints it
		}
		if !strings.Contains(usageText, name+" ") && !strings.Contains(usageText, name+",") {
			t.Errorf("usage.txt does not list the flag %s", name)
		}
	}
}

// TestHelpNamesTheEditorDefaults keeps the help text in step with the one
// place the editor module defaults are decided (plugin/defaults.go).
func TestHelpNamesTheEditorDefaults(t *testing.T) {
	want := "default: " + plugin.DefaultSocketModule + " for serve, " + plugin.DefaultModule + " for nvim"
	if !strings.Contains(usageText, want) {
		t.Errorf("usage.txt does not say %q", want)
	}
}
