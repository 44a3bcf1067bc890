package main

import (
	"encoding/json"
	"go/ast"
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

// TestRuntimeNeverImportsAdapters keeps the architecture of doc/design.md §2: the
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

// TestStandardLibraryLeaves keeps the leaf packages that doc/design.md
// §2.3 puts on the standard library alone (runtime/job, the one job
// system, among them) there, so every layer can use them.
func TestStandardLibraryLeaves(t *testing.T) {
	for _, leaf := range []string{"runtime/job", "runtime/lang", "runtime/imports", "internal/text"} {
		for _, p := range goList(t, "-deps", "./"+leaf) {
			path := p["ImportPath"].(string)
			if std, _ := p["Standard"].(bool); !std && path != "flow/"+leaf {
				t.Errorf("%s depends on %s; it must stay a standard-library leaf", leaf, path)
			}
		}
	}
}

// TestAdaptersOnlyTranslateJobs: the single-writer rule, job ids and
// "busy" belong to the runtime (runtime/job). No adapter package (the MCP
// server, the Neovim host, the TUI, the command) may hold its own gate
// (a job.Gate, or a slot/writer/busy field), a job-token table (a map to
// cancel functions, a token counter), or recognise or word "busy" by text.
func TestAdaptersOnlyTranslateJobs(t *testing.T) {
	for _, p := range goList(t, "./mcp/...", "./plugin/...", "./cmd/flow/...") {
		if p["ImportPath"] == "flow/internal/test/testhost" {
			continue // a test stand-in for the runtime, not an adapter
		}
		dir := p["Dir"].(string)
		files, _ := p["GoFiles"].([]any)
		for _, f := range files {
			name := dir + "/" + f.(string)
			fset := token.NewFileSet()
			af, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(af, func(n ast.Node) bool {
				bad := ""
				switch x := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && id.Name == "job" && x.Sel.Name == "Gate" {
						bad = "a job.Gate of its own"
					}
				case *ast.StructType:
					for _, f := range x.Fields.List {
						for _, id := range f.Names {
							switch strings.ToLower(id.Name) {
							case "slot", "writer", "busy", "jobs", "nextjob":
								bad = "a job field " + id.Name
							}
						}
					}
				case *ast.MapType:
					if sel, ok := x.Value.(*ast.SelectorExpr); ok && sel.Sel.Name == "CancelFunc" {
						bad = "a job-token table (map to cancel functions)"
					}
				case *ast.BasicLit:
					if x.Kind == token.STRING {
						s := strings.ToLower(x.Value)
						if strings.Contains(s, "busy:") || strings.Contains(s, "already in progress") || strings.Contains(s, "is busy") {
							bad = "busy worded or detected by text: " + x.Value
						}
					}
				}
				if bad != "" {
					t.Errorf("%s: adapter holds %s; the runtime's job system owns it", fset.Position(n.Pos()), bad)
				}
				return true
			})
		}
	}
}

// TestEditorSeam keeps the editor seam in one place: runtime/editor (the
// session interface and the freshness protocol) sits on bufferfs and the
// report types only, and bufferfs stays a leaf that imports no flow
// package.
func TestEditorSeam(t *testing.T) {
	allowed := map[string]map[string]bool{
		"./runtime/editor": {"flow/runtime/editor": true, "flow/bufferfs": true, "flow/runtime/report": true},
		"./bufferfs":       {"flow/bufferfs": true},
	}
	for pattern, ok := range allowed {
		for _, p := range goList(t, "-deps", pattern) {
			path := p["ImportPath"].(string)
			if strings.HasPrefix(path, "flow/") && !ok[path] {
				t.Errorf("%s depends on %s", pattern, path)
			}
		}
	}
}
