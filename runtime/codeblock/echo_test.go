package codeblock

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEchoes: code an answer gives exactly as a file has it is an echo of
// that file, named by declaration; a file the answer also changes has no
// echo, and an answer with new code has none.
func TestEchoes(t *testing.T) {
	median := statsGo[strings.Index(statsGo, "func Median"):]
	mean := statsGo[strings.Index(statsGo, "func Mean"):strings.Index(statsGo, "// Median")]
	pyFiles := []File{
		{Path: "slug.py", Language: "python", Text: "def slugify(text):\n    return text\n"},
		{Path: "test_slug.py", Language: "python", Text: slugTestPy},
	}
	slugClass := slugTestPy[strings.Index(slugTestPy, "class SlugifyTest"):strings.Index(slugTestPy, "\n\nif __name__")]
	tests := []struct {
		name   string
		answer string
		files  []File
		want   []Echo
	}{
		{
			name:   "a function copied as it is",
			answer: "The task is done.\n\n```go\n" + median + "```\n",
			files:  goFiles(),
			want:   []Echo{{Path: "stats.go", Names: []string{"Median"}}},
		},
		{
			name:   "the whole file copied, and a test file's function too",
			answer: "```go\n" + statsGo + "```\n\n```go\n" + statsTestGo[strings.Index(statsTestGo, "func TestMean"):] + "```\n",
			files:  goFiles(),
			want: []Echo{
				{Path: "stats.go", Names: []string{"Mean", "Median"}},
				{Path: "stats_test.go", Names: []string{"TestMean"}},
			},
		},
		{
			name:   "a function that differs only in layout",
			answer: "```go\n" + strings.Replace(median, "\ts := append", "\ts :=    append", 1) + "```\n",
			files:  goFiles(),
			want:   []Echo{{Path: "stats.go", Names: []string{"Median"}}},
		},
		{
			name:   "one function copied and another changed: the file changes",
			answer: "```go\n" + mean + "```\n\n```go\n" + strings.Replace(median, "return s[len(s)/2]", "return s[0]", 1) + "```\n",
			files:  goFiles(),
		},
		{
			name:   "a Python test class copied whole",
			answer: "I added a test.\n\n```python\n" + slugClass + "\n```\n",
			files:  pyFiles,
			want:   []Echo{{Path: "test_slug.py", Names: []string{"SlugifyTest"}}},
		},
		{
			name:   "a JavaScript function copied as it is",
			answer: "```js\n" + formatJS + "```\n",
			files:  []File{{Path: "format.js", Language: "javascript", Text: formatJS}, {Path: "cart.js", Language: "javascript", Text: cartJS}},
			want:   []Echo{{Path: "format.js", Names: []string{"formatPrice"}}},
		},
		{
			name:   "new code only",
			answer: "```go\nfunc Max(xs []float64) float64 { return xs[0] }\n```\n",
			files:  goFiles(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Echoes(tc.answer, "", tc.files)); diff != "" {
				t.Errorf("Echoes (-want +got):\n%s", diff)
			}
			if tc.want != nil && len(Changes(tc.answer, "", tc.files)) != 0 {
				t.Errorf("an answer that only echoes changed a file")
			}
		})
	}
}

// TestTestFilesFor: a source file's tests are the project's test files
// named after it in its folder, else the file the language's convention
// names; a test file, a stub and other languages have none.
func TestTestFilesFor(t *testing.T) {
	all := []string{"inventory.go", "inventory_test.go", "duration.py", "test_duration.py", "src/arrays.js", "src/arrays.test.js", "src/arrays.spec.js", "lib/other_test.go"}
	for _, tc := range []struct {
		p    string
		want []string
	}{
		{"inventory.go", []string{"inventory_test.go"}},
		{"duration.py", []string{"test_duration.py"}},
		{"src/arrays.js", []string{"src/arrays.test.js", "src/arrays.spec.js"}},
		{"lib/other.go", []string{"lib/other_test.go"}},
		{"stats.go", []string{"stats_test.go"}},
		{"pkg/slug.py", []string{"pkg/test_slug.py"}},
		{"cart.ts", []string{"cart.test.ts"}},
		{"inventory_test.go", nil},
		{"test_duration.py", nil},
		{"types.pyi", nil},
		{"main.rs", nil},
	} {
		if got := TestFilesFor(tc.p, all); !cmp.Equal(got, tc.want) {
			t.Errorf("TestFilesFor(%q) = %q, want %q", tc.p, got, tc.want)
		}
	}
}
