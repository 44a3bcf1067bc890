package codeblock

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/runtime/lang"
)

const statsGo = `// Package stats has small descriptive statistics.
package stats

import "sort"

// Mean returns the arithmetic mean of xs.
func Mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// Median returns the middle value of xs.
func Median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
`

const statsTestGo = `package stats

import "testing"

func TestMean(t *testing.T) {
	if Mean([]float64{1, 3}) != 2 {
		t.Fatal("mean")
	}
}
`

const durationPy = `"""Parse durations."""
import re

_PART = re.compile(r"(\d)([hms])")


def parse_duration(text):
    """Return the seconds."""
    total = 0
# a comment at the margin, inside the function
    for m in _PART.finditer(text):
        total += int(m.group(1))
    return total


def other():
    return 1
`

const formatJS = `/**
 * formatPrice formats cents.
 * @param {number} cents
 */
export function formatPrice(cents) {
  return "$" + (cents / 100).toFixed(2);
}
`

const cartJS = `import { formatPrice } from "./format.js";

/** cartTotal is the total. */
export function cartTotal(items) {
  const cents = items.reduce((sum, item) => sum + item.cents, 0);
  return formatPrice(cents);
}
`

func goFiles() []File {
	return []File{
		{Path: "stats.go", Language: "go", Text: statsGo},
		{Path: "stats_test.go", Language: "go", Text: statsTestGo},
	}
}

// change is what a test compares of a Change.
type change struct {
	Path            string
	Replaced, Added []string
}

func summary(chs []Change) []change {
	var out []change
	for _, c := range chs {
		out = append(out, change{c.Path, c.Replaced, c.Added})
	}
	return out
}

func TestChanges(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		task   string
		files  []File
		want   []change
		// contains and lacks are texts the changed files must and must not hold.
		contains, lacks map[string][]string
	}{
		{
			name:   "a function alone replaces the file's, which keeps its comment",
			answer: "Here is the fix:\n\n```go\nfunc Median(xs []float64) float64 {\n\ts := append([]float64(nil), xs...)\n\tsort.Float64s(s)\n\tn := len(s)\n\tif n%2 == 0 {\n\t\treturn (s[n/2-1] + s[n/2]) / 2\n\t}\n\treturn s[n/2]\n}\n```\n",
			files:  goFiles(),
			want:   []change{{Path: "stats.go", Replaced: []string{"Median"}}},
			contains: map[string][]string{"stats.go": {
				"// Median returns the middle value of xs.\nfunc Median",
				"return (s[n/2-1] + s[n/2]) / 2",
				"// Mean returns the arithmetic mean of xs.",
			}},
		},
		{
			name: "a whole file changes only the declarations that differ",
			answer: "Here's the updated `stats.go` file:\n\n```go\n" +
				strings.Replace(statsGo, "return s[len(s)/2]", "if len(s)%2 == 0 {\n\t\treturn (s[len(s)/2-1] + s[len(s)/2]) / 2\n\t}\n\treturn s[len(s)/2]", 1) + "```\n",
			files: goFiles(),
			want:  []change{{Path: "stats.go", Replaced: []string{"Median"}}},
		},
		{
			name: "an indented block under a list item, a new function and its test",
			answer: "1. Add the function:\n     ```go\n     // Reverse returns s backwards.\n     func Reverse(s string) string {\n         r := []rune(s)\n         for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {\n             r[i], r[j] = r[j], r[i]\n         }\n         return string(r)\n     }\n     ```\n" +
				"2. Test it:\n     ```go\n     func TestReverse(t *testing.T) {\n         if Reverse(\"ab\") != \"ba\" {\n             t.Fatal(\"reverse\")\n         }\n     }\n     ```\n",
			task:  "Add a function Reverse to stats.go, with a test.",
			files: goFiles(),
			want: []change{
				{Path: "stats.go", Added: []string{"Reverse"}},
				{Path: "stats_test.go", Added: []string{"TestReverse"}},
			},
			contains: map[string][]string{
				"stats.go":      {"}\n\n// Reverse returns s backwards.\nfunc Reverse(s string) string {\n\tr := []rune(s)"},
				"stats_test.go": {"\n\nfunc TestReverse(t *testing.T) {\n\tif Reverse(\"ab\") != \"ba\" {"},
			},
		},
		{
			name:   "an import the block needs is added to the Go file",
			answer: "```go\nimport \"math\"\n\n// Mean returns the rounded mean of xs.\nfunc Mean(xs []float64) float64 {\n\treturn math.Round(xs[0])\n}\n```",
			files:  goFiles(),
			want:   []change{{Path: "stats.go", Replaced: []string{"Mean"}}},
			contains: map[string][]string{"stats.go": {
				"import (\n\t\"math\"\n\t\"sort\"\n)",
				"// Mean returns the rounded mean of xs.\nfunc Mean",
			}},
			lacks: map[string][]string{"stats.go": {"arithmetic"}},
		},
		{
			name:   "a usage example's main is not added to a library package",
			answer: "```go\nfunc main() {\n\tprintln(Median(nil))\n}\n```",
			task:   "fix Median in stats.go",
			files:  goFiles(),
		},
		{
			name:   "Go that does not parse changes nothing",
			answer: "```go\nfunc Median(xs []float64) float64 {\n\treturn s[\n}\n```",
			files:  goFiles(),
		},
		{
			name:   "a declaration equal to the file's is no change",
			answer: "```go\n" + statsGo + "```",
			files:  goFiles(),
		},
		{
			name:   "a reply cut short inside its block changes nothing",
			answer: "```go\nfunc Median(xs []float64) float64 {\n\treturn 0\n}\n",
			files:  goFiles(),
		},
		{
			name:   "a tool call written as JSON is not code",
			answer: "```json\n{\"name\": \"file_edit\", \"arguments\": {}}\n```",
			files:  goFiles(),
		},
		{
			name: "a name two files define is left alone unless the block names one",
			answer: "```go\nfunc Median(xs []float64) float64 {\n\treturn 0\n}\n```\n\n" +
				"In `b/stats.go`:\n```go\nfunc Median(xs []float64) float64 {\n\treturn 1\n}\n```",
			files: []File{
				{Path: "a/stats.go", Language: "go", Text: statsGo},
				{Path: "b/stats.go", Language: "go", Text: statsGo},
			},
			want:     []change{{Path: "b/stats.go", Replaced: []string{"Median"}}},
			contains: map[string][]string{"b/stats.go": {"return 1\n}"}},
		},
		{
			name:   "a name two files define is not added to a third the task names",
			answer: "```go\nfunc Median(xs []float64) float64 {\n\treturn 0\n}\n```",
			task:   "fix Median, see c/c.go",
			files: []File{
				{Path: "a/stats.go", Language: "go", Text: statsGo},
				{Path: "b/stats.go", Language: "go", Text: statsGo},
				{Path: "c/c.go", Language: "go", Text: "package c\n"},
			},
		},
		{
			name: "a Python function is replaced whole, past a comment at the margin inside it",
			answer: "**duration.py**:\n```python\nimport re\n\n_PART = re.compile(r\"(\\d)([hms])\")\n\ndef parse_duration(text):\n" +
				"    \"\"\"Return the seconds.\"\"\"\n    return sum(int(n) for n, _ in re.findall(r\"(\\d+)([hms])\", text))\n```",
			files: []File{{Path: "duration.py", Language: "python", Text: durationPy}},
			want:  []change{{Path: "duration.py", Replaced: []string{"parse_duration"}}},
			contains: map[string][]string{"duration.py": {
				"def parse_duration(text):\n    \"\"\"Return the seconds.\"\"\"\n    return sum(int(n) for n, _ in re.findall(r\"(\\d+)([hms])\", text))\n\n\ndef other():",
			}},
			lacks: map[string][]string{"duration.py": {"a comment at the margin", "total += "}},
		},
		{
			name:   "a Python import the block needs is added after the file's imports",
			answer: "```py\nfrom collections import Counter\n\ndef other():\n    return Counter()\n```",
			files:  []File{{Path: "duration.py", Language: "python", Text: durationPy}},
			want:   []change{{Path: "duration.py", Replaced: []string{"other"}}},
			contains: map[string][]string{"duration.py": {
				"import re\nfrom collections import Counter\n\n_PART",
			}},
		},
		{
			name: "one block holding two files, split at the comments that name them",
			answer: "```javascript\n// format.js (updated content)\n/**\n * formatPrice formats cents in a currency.\n */\nexport function formatPrice(cents, currency) {\n  return currency + \" \" + (cents / 100).toFixed(2);\n}\n\n" +
				"// cart.js (updated content)\nimport { formatPrice } from \"./format.js\";\n\nexport function cartTotal(items, currency) {\n  const cents = items.reduce((sum, item) => sum + item.cents, 0);\n  return formatPrice(cents, currency);\n}\n```",
			files: []File{
				{Path: "src/cart.js", Language: "javascript", Text: cartJS},
				{Path: "src/format.js", Language: "javascript", Text: formatJS},
			},
			want: []change{
				{Path: "src/cart.js", Replaced: []string{"cartTotal"}},
				{Path: "src/format.js", Replaced: []string{"formatPrice"}},
			},
			contains: map[string][]string{
				"src/cart.js":   {"/** cartTotal is the total. */\nexport function cartTotal(items, currency) {"},
				"src/format.js": {"/**\n * formatPrice formats cents in a currency.\n */\nexport function formatPrice(cents, currency) {"},
			},
			lacks: map[string][]string{"src/format.js": {"formats cents.\n", "updated content"}},
		},
		{
			name:   "a Python block split by a file: comment, and a comment that only mentions a file",
			answer: "```python\n# file: duration.py\ndef other():\n    return 2\n\n# see duration.py for the rest\n```",
			files:  []File{{Path: "duration.py", Language: "python", Text: durationPy}},
			want:   []change{{Path: "duration.py", Replaced: []string{"other"}}},
			contains: map[string][]string{"duration.py": {
				"def other():\n    return 2\n\n# see duration.py for the rest\n",
			}},
			lacks: map[string][]string{"duration.py": {"file: duration.py"}},
		},
		{
			name:     "a comment a blank line parts from a declaration is not its leading comment",
			answer:   "```js\n/** cartTotal sums. */\nexport function cartTotal(items) {\n  return 0;\n}\n```",
			files:    []File{{Path: "src/cart.js", Language: "javascript", Text: "// Totals.\n\nexport function cartTotal(items) {\n  return 1;\n}\n"}},
			want:     []change{{Path: "src/cart.js", Replaced: []string{"cartTotal"}}},
			contains: map[string][]string{"src/cart.js": {"// Totals.\n\n/** cartTotal sums. */\nexport function cartTotal(items) {\n  return 0;\n}\n"}},
		},
		{
			name:   "a new one-line JavaScript function goes to the file the task names",
			answer: "```js\nexport function chunk(array, size) { return [array.slice(0, size)]; }\n```",
			task:   "Add and export a function chunk(array, size) in format.js",
			files: []File{
				{Path: "src/cart.js", Language: "javascript", Text: cartJS},
				{Path: "src/format.js", Language: "javascript", Text: formatJS},
			},
			want:     []change{{Path: "src/format.js", Added: []string{"chunk"}}},
			contains: map[string][]string{"src/format.js": {"}\n\nexport function chunk(array, size) { return [array.slice(0, size)]; }\n"}},
		},
		{
			name:   "a new function with no file to go to changes nothing",
			answer: "```js\nexport function chunk(array, size) { return [array.slice(0, size)]; }\n```",
			task:   "Add a function chunk",
			files: []File{
				{Path: "src/cart.js", Language: "javascript", Text: cartJS},
				{Path: "src/format.js", Language: "javascript", Text: formatJS},
			},
		},
		{
			name:   "a TypeScript const enum is known by its name",
			answer: "```ts\nexport const enum Dir { Up, Down }\n```",
			files:  []File{{Path: "src/enums.ts", Language: "typescript", Text: "export const enum Color { Red }\n\nexport const enum Dir { Up }\n"}},
			want:   []change{{Path: "src/enums.ts", Replaced: []string{"Dir"}}},
			contains: map[string][]string{"src/enums.ts": {
				"export const enum Color { Red }\n\nexport const enum Dir { Up, Down }\n",
			}},
		},
		{
			name:   "a file named with an upper-case extension",
			answer: "In lib/Slug.PY:\n```python\ndef slugify(s):\n    return s.lower()\n```",
			files: []File{
				{Path: "lib/Slug.PY", Language: "python", Text: "def other():\n    pass\n"},
				{Path: "lib/types.pyi", Language: "python", Text: "def other() -> None: ...\n"},
			},
			want: []change{{Path: "lib/Slug.PY", Added: []string{"slugify"}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Changes(tc.answer, tc.task, tc.files)
			if diff := cmp.Diff(tc.want, summary(got)); diff != "" {
				t.Fatalf("changes (-want +got):\n%s", diff)
			}
			texts := map[string]string{}
			for _, c := range got {
				texts[c.Path] = c.New
				orig := ""
				for _, f := range tc.files {
					if f.Path == c.Path {
						orig = f.Text
					}
				}
				if c.Old != orig {
					t.Errorf("%s: Old is not the file's text", c.Path)
				}
			}
			for p, subs := range tc.contains {
				for _, s := range subs {
					if !strings.Contains(texts[p], s) {
						t.Errorf("%s lacks %q; it is:\n%s", p, s, texts[p])
					}
				}
			}
			for p, subs := range tc.lacks {
				for _, s := range subs {
					if strings.Contains(texts[p], s) {
						t.Errorf("%s still holds %q; it is:\n%s", p, s, texts[p])
					}
				}
			}
		})
	}
}

func TestIsTestFile(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"stats_test.go", true},
		{"pkg/Stats_test.GO", true},
		{"stats.go", false},
		{"test_slug.py", true},
		{"slug_test.py", true},
		{"lib/test_slug.PY", true},
		{"test_slug.pyi", false}, // a stub is no test
		{"slug.py", false},
		{"web/util.test.js", true},
		{"web/util.spec.TSX", true},
		{"web/util.js", false},
	} {
		if got := isTestFile(tc.path); got != tc.want {
			t.Errorf("isTestFile(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// TestFenceLanguage checks that the fence tags lang.Fence writes in a brief
// are read back as the same language.
func TestFenceLanguage(t *testing.T) {
	for _, l := range []string{"go", "python", "javascript", "typescript"} {
		if got := fenceLanguage(lang.Fence(l)); got != l {
			t.Errorf("fenceLanguage(lang.Fence(%q)) = %q, want %q", l, got, l)
		}
	}
}
