package lang_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"flow/bufferfs"
	"flow/runtime/codeblock"
	"flow/runtime/lang"
	"flow/runtime/repomap"
	"flow/runtime/verify"
	"flow/runtime/verify/weakening"
)

// TestConsumersAgree shows that the packages which decide a path's language
// decide it as lang.Of does, for the paths where they once disagreed: a
// Python stub (.pyi) and extensions in upper or mixed case.
func TestConsumersAgree(t *testing.T) {
	files := map[string]string{
		"A.GO":            "package a\n\nfunc Shout() {}\n",
		"stubs/types.pyi": "def stub() -> int: ...\n",
		"src/x.Py":        "def mixed():\n    pass\n",
		"web/App.TSX":     "export function App() {}\n",
	}
	dir := t.TempDir()
	for p, s := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := bufferfs.NewDisk(dir, bufferfs.DiskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	ctx := context.Background()

	// The workspace map lists each file, in its language, with its symbols.
	m, err := repomap.Build(ctx, fsys)
	if err != nil {
		t.Fatal(err)
	}
	mapped := map[string]repomap.File{}
	for _, f := range m.Files {
		mapped[f.Path] = f
	}
	for p := range files {
		want := lang.Of(p)
		f, ok := mapped[p]
		if !ok {
			t.Errorf("repomap.Build left out %s (%s)", p, want)
			continue
		}
		if f.Language != want || repomap.Language(p) != want {
			t.Errorf("repomap: %s is %q (Language %q), lang.Of says %q", p, f.Language, repomap.Language(p), want)
		}
		if len(f.Symbols) == 0 {
			t.Errorf("repomap: %s has no symbols", p)
		}
		// Coverage keys the file by the same language.
		cov := verify.Coverage(ctx, []string{p}, nil, nil)
		if len(cov) != 1 || cov[0].Language != want {
			t.Errorf("verify.Coverage(%s) = %+v, want one item of language %q", p, cov, want)
		}
		// The weakening detector reads the file's comments as comments.
		if !weakening.SameCode(p, []byte(files[p]), []byte(files[p]+commentIn(want))) {
			t.Errorf("weakening.SameCode(%s) does not read it as %s", p, want)
		}
	}

	// A test file's name is a test file's, whatever its extension's case.
	var c weakening.Classifier
	for _, p := range []string{"calc_test.GO", "test_calc.PY", "web/sum.test.TSX", "web/sum.spec.Js"} {
		if got := c.Classify(p); got != weakening.KindTest {
			t.Errorf("weakening: Classify(%s) = %s, want %s", p, got, weakening.KindTest)
		}
	}

	// The code-block reader places a new function in the file an answer
	// names by its path, the stub and the mixed-case one included.
	var cf []codeblock.File
	for p, text := range files {
		cf = append(cf, codeblock.File{Path: p, Language: lang.Of(p), Text: text})
	}
	for _, tc := range []struct{ path, answer string }{
		{"stubs/types.pyi", "In stubs/types.pyi:\n```python\ndef added() -> int: ...\n```\n"},
		{"src/x.Py", "In src/x.Py:\n```python\ndef added():\n    pass\n```\n"},
	} {
		chs := codeblock.Changes(tc.answer, "add a function", cf)
		if len(chs) != 1 || chs[0].Path != tc.path {
			t.Errorf("codeblock.Changes naming %s changed %+v, want that file", tc.path, chs)
		}
	}
}

// commentIn returns a line comment in language.
func commentIn(language string) string {
	if language == "python" {
		return "# a comment\n"
	}
	return "// a comment\n"
}
