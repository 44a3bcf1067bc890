package main

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// goList returns the packages `go list -json` reports for patterns.
func goList(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pkgs []map[string]any
	dec := json.NewDecoder(out)
	for {
		var p map[string]any
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.String())
	}
	return pkgs
}

// TestRuntimeNeverImportsAdapters keeps the architecture of SPEC §2: the
// runtime packages and bufferfs talk to the outside through interfaces and
// never import an adapter or an adapter's library.
func TestRuntimeNeverImportsAdapters(t *testing.T) {
	forbidden := map[string]string{
		"flow/mcp":                    "the MCP adapter sits on the runtime, not under it",
		"flow/plugin":                 "the Neovim adapter sits on the runtime, not under it",
		"flow/cmd/flow":               "nothing imports the command",
		"github.com/mark3labs/mcp-go": "MCP is an adapter concern",
		"github.com/neovim/go-client/nvim/plugin": "the plugin host is an adapter concern",
		"charm.land/bubbletea/v2":                 "the TUI is a front end",
	}
	for _, p := range goList(t, "-deps", "./runtime/...", "./bufferfs/...") {
		path := p["ImportPath"].(string)
		for bad, why := range forbidden {
			if path == bad || strings.HasPrefix(path, bad+"/") {
				t.Errorf("runtime or bufferfs depends on %s: %s", path, why)
			}
		}
	}
}

// TestEveryPackageHasDoc requires a package comment on every package.
func TestEveryPackageHasDoc(t *testing.T) {
	for _, p := range goList(t, "./...") {
		dir := p["Dir"].(string)
		fset := token.NewFileSet()
		found := false
		files, _ := p["GoFiles"].([]any)
		for _, f := range files {
			af, err := parser.ParseFile(fset, dir+"/"+f.(string), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if af.Doc != nil && strings.TrimSpace(af.Doc.Text()) != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("package %s has no package comment", p["ImportPath"])
		}
	}
}
