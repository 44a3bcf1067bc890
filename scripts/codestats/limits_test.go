package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The limits of doc/design.md §2.6: no function of the product's code over
// maxLines lines or cyclomatic complexity maxCyclo (tests and testdata
// excluded), counted as `codestats funcs` counts.
const (
	maxLines = 80
	maxCyclo = 20
)

// limitedDirs are the product's code under the limits, relative to the
// repository root.
var limitedDirs = []string{"mcp/...", "cmd/flow/...", "runtime/...", "bufferfs/...", "eval/harness/..."}

// layeredDirs are the packages whose files must form no cycle, so that
// they layer with no edge running back up.
var layeredDirs = []string{"runtime/agent", "mcp"}

// repoRoot is the repository root seen from this package's folder.
const repoRoot = "../.."

// TestFunctionLimits fails on every function over the limits, naming it
// with its figures, so that the next accreting function is split when it
// is written and not found later.
func TestFunctionLimits(t *testing.T) {
	t.Parallel()
	var args []string
	for _, d := range limitedDirs {
		args = append(args, filepath.Join(repoRoot, d))
	}
	_, byDir, err := packageFuncs(args)
	if err != nil {
		t.Fatal(err)
	}
	if len(byDir) < len(limitedDirs) {
		t.Fatalf("found the functions of %d folders, want at least %d: the folders moved?", len(byDir), len(limitedDirs))
	}
	for _, fs := range byDir {
		for _, f := range fs {
			if over := overLimits(f); over != "" {
				t.Errorf("%s %s: %s (split it along what it does; doc/design.md §2.6)", strings.TrimPrefix(f.Pos, repoRoot+"/"), f.Name, over)
			}
		}
	}
}

// overLimits says how f exceeds the limits, "" when it does not.
func overLimits(f Func) string {
	var over []string
	if f.Lines > maxLines {
		over = append(over, fmt.Sprintf("%d lines > %d", f.Lines, maxLines))
	}
	if f.Cyclo > maxCyclo {
		over = append(over, fmt.Sprintf("complexity %d > %d", f.Cyclo, maxCyclo))
	}
	return strings.Join(over, ", ")
}

// TestOverLimits pins the rule itself, so that TestFunctionLimits cannot
// pass by a rule that never fires.
func TestOverLimits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		f    Func
		want string
	}{
		{Func{Lines: 80, Cyclo: 20}, ""},
		{Func{Lines: 81, Cyclo: 20}, "81 lines > 80"},
		{Func{Lines: 10, Cyclo: 21}, "complexity 21 > 20"},
		{Func{Lines: 102, Cyclo: 36}, "102 lines > 80, complexity 36 > 20"},
	}
	for _, tc := range cases {
		if got := overLimits(tc.f); got != tc.want {
			t.Errorf("overLimits(%+v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

// TestFileLayers fails when a file of a layered package is on a cycle of
// files that use each other, naming the group: then some edge must run
// back up, and the package no longer reads from the bottom up.
func TestFileLayers(t *testing.T) {
	t.Parallel()
	for _, d := range layeredDirs {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			g, err := fileGraph(filepath.Join(repoRoot, d))
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Files) < 5 {
				t.Fatalf("%s has %d files: the package moved?", d, len(g.Files))
			}
			groups := map[int][]string{}
			for f, c := range cyclic(g) {
				groups[c] = append(groups[c], f)
			}
			for _, files := range groups {
				t.Errorf("%s: these files use each other: %s (move what they share to a file below them; doc/design.md §2.6)", d, strings.Join(slices.Sorted(slices.Values(files)), " "))
			}
			if up, order := layering(g); up > 0 {
				t.Errorf("%s: %d edges run back up in the best layering %v", d, up, order)
			}
		})
	}
}
