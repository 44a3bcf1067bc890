package verify

import "testing"

func TestLanguage(t *testing.T) {
	tests := []struct {
		path, lang, ext string
	}{
		{"main.go", "go", ".go"},
		{"src/a/b.PY", "python", ".py"},
		{"types.pyi", "python", ".pyi"},
		{"lib.rs", "rust", ".rs"},
		{"app.ts", "typescript", ".ts"},
		{"app.tsx", "typescript", ".tsx"},
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
		{"a.cs", "csharp", ".cs"},
		{"a.php", "php", ".php"},
		{"a.scala", "scala", ".scala"},
		{"A.java", "java", ".java"},
		{"a.kt", "kotlin", ".kt"},
		{"a.rb", "ruby", ".rb"},
		{"a.swift", "swift", ".swift"},
		{"a.zig", "zig", ".zig"},
		{"a.ex", "elixir", ".ex"},
		{"a.exs", "elixir", ".exs"},
		{"a.hs", "haskell", ".hs"},
		{"flake.nix", "nix", ".nix"},
		{"App.vue", "vue", ".vue"},
		{"schema.proto", "proto", ".proto"},
		{"archive.tar.gz", "gz", ".gz"},
		{"README", "unknown", ""},
		{".bashrc", "unknown", ""},
		{"dir.d/file", "unknown", ""},
		{"notes.", "unknown", ""},
		{"Makefile", "make", ""},
		{"sub/Dockerfile", "dockerfile", ""},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			lang, ext := Language(tc.path)
			if lang != tc.lang || ext != tc.ext {
				t.Errorf("Language(%q) = %q, %q, want %q, %q", tc.path, lang, ext, tc.lang, tc.ext)
			}
		})
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
