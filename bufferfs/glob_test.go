package bufferfs_test

import (
	"strings"
	"testing"

	"flow/bufferfs"
)

func TestMatchGlob(t *testing.T) {
	for _, tc := range []struct {
		glob, path string
		want       bool
	}{
		{"*.go", "a/b/c.go", true},
		{"Makefile", "sub/Makefile", true},
		{"**", "any/thing", true},
		{"ci/**", "ci/a/b.yml", true},
		{"ci/**", "ci", true},
		{"ci/**", "cid/a", false},
		{"**/*_test.go", "x_test.go", true},
		{"src/*.ts", "src/a/b.ts", false},
		{"/qa/**/x.go/", "qa/1/2/x.go", true},
		{"", "a", false},
		{"[", "a", false},
	} {
		if got := bufferfs.MatchGlob(tc.glob, tc.path); got != tc.want {
			t.Errorf("MatchGlob(%q, %q) = %v, want %v", tc.glob, tc.path, got, tc.want)
		}
	}
}

// BenchmarkMatchGlobManyStars: a glob of many "**" against a deep path
// stays linear in their product (a recursive matcher is exponential here).
func BenchmarkMatchGlobManyStars(b *testing.B) {
	glob := strings.Repeat("**/a/", 16) + "z"
	p := strings.Repeat("a/", 31) + "b"
	for b.Loop() {
		if bufferfs.MatchGlob(glob, p) {
			b.Fatal("matched")
		}
	}
}
