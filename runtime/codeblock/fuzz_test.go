package codeblock

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// FuzzChanges: whatever the answer and the file, Changes does not panic,
// a change starts from the file's text and differs from it, a changed Go
// file parses, and applying the same answer again changes nothing more.
func FuzzChanges(f *testing.F) {
	f.Add("```go\nfunc Median(xs []float64) float64 {\n\treturn 0\n}\n```", statsGo, "go")
	f.Add("```go\nimport \"math\"\n\nfunc Extra() float64 { return math.Pi }\n```", statsGo, "go")
	f.Add("**duration.py**:\n```python\nimport os\n\ndef parse_duration(text):\n    return 0\n```", durationPy, "python")
	f.Add("```js\n// format.js\nexport function formatPrice(c, cur) {\n  return cur;\n}\n```", formatJS, "javascript")
	f.Add("```ts\n/* x\n*/\nexport const a = `\n${1}\n`;\n```", cartJS, "typescript")
	f.Add("```python\nclass SlugifyTest(unittest.TestCase):\n  def test_new(self):\n    pass\n```", slugTestPy, "python")
	f.Fuzz(func(t *testing.T, answer, text, lang string) {
		name := map[string]string{"go": "a.go", "python": "a.py", "javascript": "a.js", "typescript": "a.ts"}[lang]
		if name == "" {
			return
		}
		files := []File{{Path: name, Language: lang, Text: text}}
		chs := Changes(answer, "change "+name, files)
		if len(chs) > 1 {
			t.Fatalf("%d changes for one file", len(chs))
		}
		for _, c := range chs {
			if c.Path != name || c.Old != text || c.New == c.Old {
				t.Fatalf("change %+v does not start from the file or changes nothing", c)
			}
			if lang == "go" {
				if _, err := parser.ParseFile(token.NewFileSet(), name, c.New, parser.ParseComments); err != nil {
					t.Fatalf("changed Go file does not parse: %v\n%s", err, c.New)
				}
			}
			again := Changes(answer, "change "+name, []File{{Path: name, Language: lang, Text: c.New}})
			if len(again) != 0 {
				t.Fatalf("the answer applied twice changes again:\nfirst:\n%s\nsecond:\n%s", c.New, again[0].New)
			}
		}
	})
}

// FuzzWholeFiles: whatever the answer, WholeFiles does not panic, every
// path it returns is relative and stays in the workspace, and no path is
// returned twice.
func FuzzWholeFiles(f *testing.F) {
	f.Add("stats.go\n```go\npackage stats\n```\n")
	f.Add("### File: **`a/b.py`**:\n```python\ndef f():\n    ...\n```\n")
	f.Add("```go x.go\n// x.go\n```\n````\n```\n````\n")
	f.Add("Here's the updated `a.js`:\n```js\nexport function f() {\n  return 2;\n}\n```\n")
	// a.js exists, so that sentences naming it are read too.
	old := func(p string) (string, bool) {
		if p == "a.js" {
			return "export function f() {\n  return 1;\n}\n", true
		}
		return "", false
	}
	f.Fuzz(func(t *testing.T, answer string) {
		seen := map[string]bool{}
		for _, w := range WholeFiles(answer, old) {
			if w.Path == "" || strings.HasPrefix(w.Path, "/") || strings.Contains(w.Path, "..") || seen[w.Path] {
				t.Fatalf("path %q (seen %t)", w.Path, seen[w.Path])
			}
			seen[w.Path] = true
		}
	})
}
