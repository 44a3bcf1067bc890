// Package lang decides what language a workspace path holds and reads the
// top-level declarations of the languages flow edits.
//
// [Of] is the one answer to "what language is this file": the coverage
// check, the workspace map, the code-block reader and the weakening
// detector all ask it, so that a file one of them calls Python another
// cannot call unknown. The names it returns are the ones operators write in
// a check's filetypes. [Decls] splits Go, Python and JavaScript/TypeScript
// source into its top-level declarations, with the byte spans an editor of
// whole declarations needs; the workspace map lists their names.
//
// The package is a leaf: it imports only the standard library.
package lang

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// Unknown is the language of a file without an extension whose base name
// is not a well-known one either.
const Unknown = "unknown"

// languages maps a lower-cased dotted extension to a language name.
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

// baseNames maps well-known extensionless file names, lower-cased, to a
// language, so that a Makefile or Dockerfile is keyed by a meaningful name
// rather than "unknown".
var baseNames = map[string]string{
	"makefile":    "make",
	"gnumakefile": "make",
	"dockerfile":  "dockerfile",
}

// documentation lists the extensions of documentation and data files,
// which need no static-analysis coverage.
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

// names is the set of language names the tables above map to.
var names = func() map[string]bool {
	m := map[string]bool{}
	for _, l := range languages {
		m[l] = true
	}
	for _, l := range baseNames {
		m[l] = true
	}
	return m
}()

// base returns the final element of p, read with either slash as the
// separator, so that a path written on Windows names the same file.
func base(p string) string {
	return path.Base(strings.ReplaceAll(p, `\`, "/"))
}

// Extension returns the lower-cased final suffix of p's base name,
// including the dot, or "" when there is none. A leading dot does not
// start a suffix, so a dotfile such as ".bashrc" has none, and neither
// does a trailing one ("notes.").
func Extension(p string) string {
	b := base(p)
	i := strings.LastIndexByte(b, '.')
	if i <= 0 || i == len(b)-1 {
		return ""
	}
	return strings.ToLower(b[i:])
}

// Of returns the language of the file at p, deciding by its extension
// without regard to case. A known extension maps through the built-in
// table (".pyi" is Python, ".tsx" TypeScript); an unknown one is its own
// language, the extension without its dot ("vue"). A file without an
// extension is [Unknown] unless its base name is well known (Makefile,
// Dockerfile). Dotfiles have no extension, so ".bashrc" is Unknown: its
// name says what reads it, not what it is written in, and guessing would
// ask operators for coverage of files no check of theirs reads.
func Of(p string) string {
	ext := Extension(p)
	if ext == "" {
		if l, ok := baseNames[strings.ToLower(base(p))]; ok {
			return l
		}
		return Unknown
	}
	if l, ok := languages[ext]; ok {
		return l
	}
	return ext[1:]
}

// Known reports whether language is a name of the built-in tables (a
// programming or build language) rather than an unknown extension that
// stands for itself, such as "png", or [Unknown].
func Known(language string) bool {
	return names[language]
}

// Extensions returns the dotted extensions the built-in table maps to a
// language that keep reports, sorted: Extensions(Scans) are the
// extensions of the source [Decls] reads.
func Extensions(keep func(language string) bool) []string {
	var out []string
	for ext, l := range languages {
		if keep(l) {
			out = append(out, ext)
		}
	}
	slices.Sort(out)
	return out
}

// ExtensionPattern returns a regular expression, without anchors or
// flags, matching any of Extensions(keep): `\.go|\.py`. Text that names
// files (check output, an answer) is searched with it.
func ExtensionPattern(keep func(language string) bool) string {
	exts := Extensions(keep)
	for i, e := range exts {
		exts[i] = regexp.QuoteMeta(e)
	}
	return strings.Join(exts, "|")
}

// IsDocumentation reports whether p is a documentation or data file
// (Markdown, text, JSON, TOML, YAML, lock files, CSV), which needs no
// static-analysis coverage.
func IsDocumentation(p string) bool {
	return documentation[Extension(p)]
}
