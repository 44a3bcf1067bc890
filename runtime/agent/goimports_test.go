package agent

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/runtime/config"
	"flow/runtime/progress"
	"flow/runtime/report"
)

const inventoryGo = `package inventory

import "errors"

// ErrBadQuantity is returned for a quantity below one.
var ErrBadQuantity = errors.New("bad quantity")

// Stock counts items.
type Stock struct{ items map[string]int }

// Add adds n items.
func (s *Stock) Add(item string, n int) error {
	if n < 1 {
		return ErrBadQuantity
	}
	if s.items == nil {
		s.items = map[string]int{}
	}
	s.items[item] += n
	return nil
}
`

// TestGoImportsMended: the coder's edit uses fmt without importing it, as
// the 1.5B coder did in the evaluation. With agent.go_imports the host adds
// the import before the checks run, and the real go vet passes; switched
// off, vet fails on "undefined: fmt".
func TestGoImportsMended(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain")
	}
	remove := `// Remove takes n items out.
func (s *Stock) Remove(item string, n int) error {
	if n > s.items[item] {
		return fmt.Errorf("remove %d %s: only %d in stock", n, item, s.items[item])
	}
	s.items[item] -= n
	return nil
}
`
	for _, c := range []struct {
		name     string
		on       bool
		wantVet  string
		wantFile bool // the file imports fmt
	}{
		{"on", true, report.StatusOK, true},
		{"off", false, report.StatusFailed, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := workspace(t, map[string]string{
				"go.mod":       "module example.com/inventory\n\ngo 1.21\n",
				"inventory.go": inventoryGo,
			})
			cfg := testConfig(dir, shCheck("vet", config.KindLint, []string{"go"}, "GOFLAGS=-mod=mod GOTOOLCHAIN=local go vet ./..."))
			cfg.Agent.GoImports = c.on
			be := newScripted(t,
				say("1. Add Remove to inventory.go."),
				do(tc("c1", "file_edit", map[string]string{
					"path":       "inventory.go",
					"old_string": "\treturn nil\n}\n",
					"new_string": "\treturn nil\n}\n\n" + remove,
				})),
				say("Added Remove."),
			)
			h := newHarness(t, cfg, be)
			rep := h.run(t, "Add Remove(item, n) to Stock; removing more than is in stock is an error.")

			got := h.read(t, "inventory.go")
			if has := strings.Contains(got, `"fmt"`); has != c.wantFile {
				t.Errorf("inventory.go imports fmt: %v, want %v:\n%s", has, c.wantFile, got)
			}
			if !strings.Contains(got, remove) {
				t.Errorf("the coder's Remove is not in inventory.go:\n%s", got)
			}
			var vet *report.CheckResult
			for i := range rep.Checks {
				if rep.Checks[i].Name == "vet" {
					vet = &rep.Checks[i]
				}
			}
			if vet == nil || vet.Status != c.wantVet {
				t.Fatalf("vet after the coder: %+v, want status %s", vet, c.wantVet)
			}

			var mended []progress.Event
			for _, e := range h.events {
				if e.Kind == progress.ToolEnd && strings.HasPrefix(e.ToolCallID, "imports_") {
					mended = append(mended, e)
				}
			}
			if !c.on {
				if len(mended) != 0 || len(rep.HostEdits) != 0 {
					t.Errorf("imports mended with go_imports off: %+v", mended)
				}
				return
			}
			if len(mended) != 1 {
				t.Fatalf("want one mend of the imports in the progress, got %+v", mended)
			}
			e := mended[0]
			if want := "flow mends the imports of inventory.go: adds `fmt`"; e.Message != want || e.Status != report.StatusOK {
				t.Errorf("mend event %q (%s), want %q (ok)", e.Message, e.Status, want)
			}
			if e.Diff == nil || !strings.Contains(e.Diff.Diff, `+	"fmt"`) {
				t.Errorf("the mend's diff does not show the import: %+v", e.Diff)
			}
			for _, ev := range toolEvents(rep) {
				if strings.HasPrefix(ev.ToolCallID, "imports_") {
					t.Errorf("the host's call is one of the report's events: %+v", ev)
				}
			}
			want := []report.HostEdit{{Cycle: 1, Path: "inventory.go", What: "imports: adds `fmt`", Status: report.StatusOK}}
			if d := cmp.Diff(want, rep.HostEdits); d != "" {
				t.Errorf("host_edits (-want +got):\n%s", d)
			}
			if rep.ToolCalls != 1 {
				t.Errorf("tool_calls %d, want the coder's 1", rep.ToolCalls)
			}
		})
	}
}

// TestGoImportsMendedReplay replays the 1.5B coder's first reply of
// evaluation run S1 (go-inventory-remove): a right Remove in a code block,
// using fmt.Errorf, in a file that imports only errors. The answer's code
// is applied; with agent.go_imports the real go vet passes, switched off
// it fails on "undefined: fmt", as the run's twin without the rule did.
func TestGoImportsMendedReplay(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain")
	}
	reply := readTestdata(t, "replies/inventory-remove-fmt.txt")
	inventory := readTestdata(t, "replies/inventory.go.txt")
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("go_imports=%t", on), func(t *testing.T) {
			dir := workspace(t, map[string]string{
				"go.mod":       "module example.com/inventory\n\ngo 1.21\n",
				"inventory.go": inventory,
			})
			cfg := testConfig(dir, shCheck("vet", config.KindLint, []string{"go"}, "GOFLAGS=-mod=mod GOTOOLCHAIN=local go vet ./..."))
			cfg.Agent.GoImports = on
			cfg.Agent.MaxIterations = 2
			be := newScripted(t, say("1. Make Remove refuse."), say(reply), say("Done."))
			h := newHarness(t, cfg, be)
			rep := h.run(t, "Removing more of an item than there is in stock drives its count negative. Stock.Remove should refuse that with an error and leave the count unchanged.")
			got := h.read(t, "inventory.go")
			if !strings.Contains(got, "cannot remove %d items from stock") {
				t.Fatalf("the reply's Remove was not applied:\n%s", got)
			}
			want := map[bool]string{true: report.StatusOK, false: report.StatusFailed}[on]
			vet := ""
			for _, c := range rep.Checks {
				if c.Name == "vet" {
					vet = c.Status
				}
			}
			if vet != want {
				t.Errorf("vet %q, want %s:\n%s", vet, want, got)
			}
		})
	}
}
