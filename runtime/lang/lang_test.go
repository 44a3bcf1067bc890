package lang

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOf(t *testing.T) {
	tests := []struct {
		path, lang, ext string
	}{
		// Every class of the table, lower case.
		{"main.go", "go", ".go"},
		{"types.pyi", "python", ".pyi"},
		{"lib.rs", "rust", ".rs"},
		{"app.ts", "typescript", ".ts"},
		{"app.tsx", "typescript", ".tsx"},
		{"app.mts", "typescript", ".mts"},
		{"app.cts", "typescript", ".cts"},
		{"x.js", "javascript", ".js"},
		{"x.jsx", "javascript", ".jsx"},
		{"x.mjs", "javascript", ".mjs"},
		{"x.cjs", "javascript", ".cjs"},
		{"init.lua", "lua", ".lua"},
		{"run.sh", "bash", ".sh"},
		{"run.bash", "bash", ".bash"},
		{"a.c", "c", ".c"},
		{"a.h", "c", ".h"},
		{"a.cc", "cpp", ".cc"},
		{"a.cpp", "cpp", ".cpp"},
		{"a.cxx", "cpp", ".cxx"},
		{"a.hpp", "cpp", ".hpp"},
		{"a.hh", "cpp", ".hh"},
		{"a.cs", "csharp", ".cs"},
		{"a.php", "php", ".php"},
		{"a.scala", "scala", ".scala"},
		{"A.java", "java", ".java"},
		{"a.kt", "kotlin", ".kt"},
		{"build.gradle.kts", "kotlin", ".kts"},
		{"a.rb", "ruby", ".rb"},
		{"a.swift", "swift", ".swift"},
		{"a.zig", "zig", ".zig"},
		{"a.ex", "elixir", ".ex"},
		{"a.exs", "elixir", ".exs"},
		{"a.erl", "erlang", ".erl"},
		{"a.hs", "haskell", ".hs"},
		{"a.ml", "ocaml", ".ml"},
		{"flake.nix", "nix", ".nix"},
		{"a.dart", "dart", ".dart"},
		{"init.vim", "vim", ".vim"},
		{"index.html", "html", ".html"},
		{"a.pl", "perl", ".pl"},
		{"a.r", "r", ".r"},
		{"a.jl", "julia", ".jl"},
		{"main.tf", "terraform", ".tf"},
		// The case of the extension does not matter.
		{"A.GO", "go", ".go"},
		{"x.Py", "python", ".py"},
		{"src/a/b.PY", "python", ".py"},
		{"Stub.PYI", "python", ".pyi"},
		{"web/App.TSX", "typescript", ".tsx"},
		{"R.JS", "javascript", ".js"},
		// An unknown extension is its own language.
		{"App.vue", "vue", ".vue"},
		{"App.VUE", "vue", ".vue"},
		{"schema.proto", "proto", ".proto"},
		{"archive.tar.gz", "gz", ".gz"},
		// Directories do not count, with either separator.
		{"dir.d/file", "unknown", ""},
		{"pkg.go/README", "unknown", ""},
		{`src\win\main.go`, "go", ".go"},
		{"a/b/c/d.ts", "typescript", ".ts"},
		// No extension: unknown, unless the base name is well known.
		{"README", "unknown", ""},
		{"notes.", "unknown", ""},
		{"Makefile", "make", ""},
		{"GNUmakefile", "make", ""},
		{"sub/Dockerfile", "dockerfile", ""},
		{"sub/DOCKERFILE", "dockerfile", ""},
		{`sub\Makefile`, "make", ""},
		// A dotfile has no extension: its name is not a language.
		{".bashrc", "unknown", ""},
		{"home/.zshrc", "unknown", ""},
		{".eslintrc.js", "javascript", ".js"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			if got := Of(tc.path); got != tc.lang {
				t.Errorf("Of(%q) = %q, want %q", tc.path, got, tc.lang)
			}
			if got := Extension(tc.path); got != tc.ext {
				t.Errorf("Extension(%q) = %q, want %q", tc.path, got, tc.ext)
			}
		})
	}
}

func TestKnown(t *testing.T) {
	for _, tc := range []struct {
		lang string
		want bool
	}{
		{"go", true},
		{"python", true},
		{"make", true},
		{"dockerfile", true},
		{"vue", false},
		{"png", false},
		{Unknown, false},
		{"", false},
	} {
		if got := Known(tc.lang); got != tc.want {
			t.Errorf("Known(%q) = %v, want %v", tc.lang, got, tc.want)
		}
	}
}

func TestExtensions(t *testing.T) {
	got := Extensions(func(l string) bool { return l == "python" || l == "typescript" })
	want := []string{".cts", ".mts", ".py", ".pyi", ".ts", ".tsx"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Extensions(python, typescript) (-want +got):\n%s", diff)
	}
	if got, want := ExtensionPattern(func(l string) bool { return l == "go" || l == "lua" }), `\.go|\.lua`; got != want {
		t.Errorf("ExtensionPattern(go, lua) = %q, want %q", got, want)
	}
	for _, ext := range Extensions(Scans) {
		if !Scans(Of("x" + ext)) {
			t.Errorf("Extensions(Scans) holds %s, whose language Decls does not read", ext)
		}
	}
}

func TestIsDocumentation(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"README.md", true},
		{"notes.txt", true},
		{"doc/index.rst", true},
		{"package.json", true},
		{"config.toml", true},
		{"ci.yaml", true},
		{"ci.YML", true},
		{"Cargo.lock", true},
		{"data.csv", true},
		{"README.MD", true},
		{"main.go", false},
		{"index.html", false},
		{"md", false},
		{".md", false},
		{"Makefile", false},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			if got := IsDocumentation(tc.path); got != tc.want {
				t.Errorf("IsDocumentation(%q) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
}

func TestFence(t *testing.T) {
	for _, tc := range []struct {
		lang, want string
	}{
		// The prompts' tags for the languages the workspace map covers.
		{"go", "go"},
		{"python", "python"},
		{"typescript", "ts"},
		{"javascript", "js"},
		{"rust", "rust"},
		{"bash", "bash"},
		{"cpp", "cpp"},
		{"make", "make"},
		{"vue", ""},
		{Unknown, ""},
		{"", ""},
	} {
		if got := Fence(tc.lang); got != tc.want {
			t.Errorf("Fence(%q) = %q, want %q", tc.lang, got, tc.want)
		}
	}
	if got := Fence(Of("Component.TSX")); got != "ts" {
		t.Errorf("Fence(Of(Component.TSX)) = %q, want ts", got)
	}
}
