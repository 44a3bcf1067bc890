// Package verify computes flow's host-side verification (SPEC §8): the
// language of a changed file, its static-analysis coverage from named checks
// and editor evidence, raw-byte fingerprints of changed files, and the
// verified decision that combines them. Apart from hashing through
// [bufferfs.FS] and the probes of its collaborators, it is pure logic;
// nothing here trusts what the model claims.
//
// [Gate] owns "verified": a cycle calls Begin when the coder finished,
// Verify for the checks, Recheck after review and Verified with the role
// outcomes, and keeps no freshness state of its own. [EditorChecks] is the
// check runner a service with an editor gives both the gate and the
// flow_check tool. The gate's building blocks (Coverage, Decide,
// Fingerprints, the editor probes) stay exported so that each keeps its own
// focused tests.
//
// A gate with a [Guard] also keeps the model from gaming "verified": it
// compares each changed file with what it held before the run ([Originals],
// fed by the write hook) and refuses edits that weaken the checks (package
// weakening), compares the checks with a baseline measured before the
// coder's first edit ([MeasureBaseline], [CompareBaseline]), and can demand
// fail-then-pass evidence from a scratch copy (package scratch).
package verify

import (
	"path"
	"strings"
)

// UnknownLanguage is the language of a file without an extension.
const UnknownLanguage = "unknown"

// languages maps a lower-cased dotted extension to a language name. The names
// are what operators write in a check's filetypes.
var languages = map[string]string{
	".go":    "go",
	".py":    "python",
	".pyi":   "python",
	".rs":    "rust",
	".ts":    "typescript",
	".tsx":   "typescript",
	".mts":   "typescript",
	".cts":   "typescript",
	".js":    "javascript",
	".jsx":   "javascript",
	".mjs":   "javascript",
	".cjs":   "javascript",
	".lua":   "lua",
	".sh":    "bash",
	".bash":  "bash",
	".c":     "c",
	".h":     "c",
	".cc":    "cpp",
	".cpp":   "cpp",
	".cxx":   "cpp",
	".hpp":   "cpp",
	".hh":    "cpp",
	".hxx":   "cpp",
	".cs":    "csharp",
	".java":  "java",
	".kt":    "kotlin",
	".kts":   "kotlin",
	".scala": "scala",
	".rb":    "ruby",
	".php":   "php",
	".swift": "swift",
	".zig":   "zig",
	".ex":    "elixir",
	".exs":   "elixir",
	".erl":   "erlang",
	".hs":    "haskell",
	".ml":    "ocaml",
	".mli":   "ocaml",
	".nix":   "nix",
	".dart":  "dart",
	".vim":   "vim",
	".htm":   "html",
	".html":  "html",
	".pl":    "perl",
	".pm":    "perl",
	".r":     "r",
	".jl":    "julia",
	".tf":    "terraform",
}

// baseNames maps well-known extensionless file names to a language, so that
// a Makefile or Dockerfile needs coverage keyed by a meaningful name rather
// than "unknown".
var baseNames = map[string]string{
	"makefile":    "make",
	"gnumakefile": "make",
	"dockerfile":  "dockerfile",
}

// documentation lists the extensions exempt from static coverage (SPEC §8).
var documentation = map[string]bool{
	".md":   true,
	".txt":  true,
	".rst":  true,
	".json": true,
	".toml": true,
	".yaml": true,
	".yml":  true,
	".lock": true,
	".csv":  true,
}

// Extension returns the lower-cased final suffix of p's base name, including
// the dot, or "" when there is none. A leading dot does not start a suffix
// (".bashrc" has none), and neither does a trailing one ("notes.").
func Extension(p string) string {
	base := path.Base(strings.ReplaceAll(p, "\\", "/"))
	i := strings.LastIndexByte(base, '.')
	if i <= 0 || i == len(base)-1 {
		return ""
	}
	return strings.ToLower(base[i:])
}

// Language returns the language name and the dotted extension of p. A known
// extension maps through the built-in table; an unknown one is its own key
// without the dot ("vue"); a file without an extension is "unknown" unless
// its base name is well known (Makefile, Dockerfile).
func Language(p string) (lang, ext string) {
	ext = Extension(p)
	if ext == "" {
		if l, ok := baseNames[strings.ToLower(path.Base(p))]; ok {
			return l, ""
		}
		return UnknownLanguage, ""
	}
	if l, ok := languages[ext]; ok {
		return l, ext
	}
	return ext[1:], ext
}

// IsDocumentation reports whether p is a documentation or data file that
// needs no static coverage.
func IsDocumentation(p string) bool {
	return documentation[Extension(p)]
}
