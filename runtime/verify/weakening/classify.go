// Package weakening tells whether a run's edit weakened the checks that
// verify it: removed or skipped tests, changed expected values, deleted
// assertions, loosened check configuration. flow's "verified" comes from the
// project's own checks, so an edit that changes what the checks check must
// not pass silently; this package finds such edits from the bytes before and
// after, without running anything, so that the verification gate can refuse
// to call the run verified and name what was weakened.
//
// The detection is deliberately conservative: a rename of a test counts as a
// removal, and a literal changed in an existing test line counts as a changed
// expected value. The cost of a false alarm is an unverified run with a reason
// a person can read; the cost of a miss is a false "verified". Adding a new
// test file or new test lines is never a finding.
package weakening

import (
	"path"
	"slices"
	"strings"

	"flow/bufferfs"
	"flow/runtime/lang"
)

// Kind classifies a changed file.
type Kind string

const (
	// KindSource is production code, documentation or anything else.
	KindSource Kind = "source"
	// KindTest is a test file or a test fixture.
	KindTest Kind = "test"
	// KindCheckConfig defines what a check runs or how strictly: linter and
	// test-runner configuration, build files whose targets checks run, CI.
	KindCheckConfig Kind = "check_config"
)

// Classifier decides the kind of a workspace path. Its zero value knows the
// conventions of Go, Python, JavaScript/TypeScript and a few others.
type Classifier struct {
	// Tests are extra globs (slash-separated, "**" for any depth, a pattern
	// without "/" matches the base name) naming test files, from the
	// operator's `[verify] tests`.
	Tests []string
	// Checks are the argv of the configured checks; workspace files they name
	// (a script, a Makefile when a check runs make) are check definitions.
	Checks [][]string
}

// testSuffixes mark test files by base name.
var testSuffixes = []string{
	"_test.go", "_test.py", "_spec.rb", "_test.rb", "_test.exs",
}

// testInfixes mark JavaScript/TypeScript test files: NAME.test.EXT, NAME.spec.EXT.
var testInfixes = []string{".test.", ".spec."}

// testDirs are directories whose every file is test code or fixture.
var testDirs = []string{"tests", "test", "__tests__", "testdata", "spec", "__snapshots__"}

// configNames are base names of check configuration files.
var configNames = map[string]bool{
	".golangci.yml": true, ".golangci.yaml": true, ".golangci.toml": true, ".golangci.json": true,
	"staticcheck.conf": true, ".eslintrc": true, ".eslintignore": true, ".prettierrc": true,
	"ruff.toml": true, ".ruff.toml": true, ".flake8": true, "setup.cfg": true, "tox.ini": true,
	"pytest.ini": true, "mypy.ini": true, ".mypy.ini": true, ".pylintrc": true, "pylintrc": true,
	"pyproject.toml": true, "conftest.py": true, ".coveragerc": true, "noxfile.py": true,
	"package.json": true, ".mocharc": true, ".pre-commit-config.yaml": true, ".gitlab-ci.yml": true,
	"Jenkinsfile": true, ".travis.yml": true, "azure-pipelines.yml": true, "Cargo.toml": true,
	"clippy.toml": true, ".clippy.toml": true, "rustfmt.toml": true, "deno.json": true,
	"biome.json": true, ".stylua.toml": true, ".luacheckrc": true,
}

// configPrefixes are base-name prefixes of check configuration files:
// eslint.config.js, tsconfig.build.json, jest.config.ts, .eslintrc.json …
var configPrefixes = []string{
	".eslintrc.", "eslint.config.", "tsconfig", "jsconfig", "jest.config.", "vitest.config.",
	".mocharc.", "babel.config.", ".babelrc", ".prettierrc.", "prettier.config.", "karma.conf.",
	"playwright.config.", "cypress.config.", "biome.", ".swcrc",
}

// configDirs hold CI definitions.
var configDirs = []string{".github/workflows", ".circleci", ".ci", ".buildkite", ".woodpecker"}

// Classify returns the kind of the slash-separated workspace path p. The
// case of a file's extension does not change its kind ("calc_test.GO" is a
// test), as it does not change its language: a file some tool may run as a
// test is better watched than missed.
func (c Classifier) Classify(p string) Kind {
	p = strings.TrimPrefix(path.Clean(p), "./")
	switch {
	case c.isCheckFile(p) || isCheckConfig(p):
		return KindCheckConfig
	case c.matchesTests(p) || isTestByConvention(p):
		return KindTest
	}
	return KindSource
}

// isCheckConfig reports whether p is a linter's, a test runner's or CI's
// configuration by its name or directory.
func isCheckConfig(p string) bool {
	base := path.Base(p)
	if configNames[base] {
		return true
	}
	for _, pre := range configPrefixes {
		if strings.HasPrefix(base, pre) {
			return true
		}
	}
	for _, d := range configDirs {
		if strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// matchesTests reports whether one of the operator's test globs matches p.
func (c Classifier) matchesTests(p string) bool {
	for _, g := range c.Tests {
		if bufferfs.MatchGlob(g, p) {
			return true
		}
	}
	return false
}

// isTestByConvention reports whether p is a test file or fixture by the
// naming conventions of the languages flow knows.
func isTestByConvention(p string) bool {
	base := path.Base(p)
	// named is the base name with its extension lower-cased, for the
	// conventions that name tests by suffix.
	ext := path.Ext(base)
	named := strings.TrimSuffix(base, ext) + strings.ToLower(ext)
	for _, s := range testSuffixes {
		if strings.HasSuffix(named, s) {
			return true
		}
	}
	if strings.HasPrefix(named, "test_") && strings.HasSuffix(named, ".py") {
		return true
	}
	for _, in := range testInfixes {
		if i := strings.Index(base, in); i > 0 && i+len(in) < len(base) && isScript(base) {
			return true
		}
	}
	if strings.HasSuffix(named, "Test.java") || strings.HasSuffix(named, "Tests.java") ||
		strings.HasPrefix(p, "src/test/") || strings.Contains(p, "/src/test/") {
		return true
	}
	return inTestDir(p)
}

// inTestDir reports whether a directory on p's path is one of testDirs.
func inTestDir(p string) bool {
	for _, seg := range strings.Split(path.Dir(p), "/") {
		if slices.Contains(testDirs, seg) {
			return true
		}
	}
	return false
}

// isScript reports whether the file named base is JavaScript or
// TypeScript, whose test files are named NAME.test.EXT or NAME.spec.EXT.
func isScript(base string) bool {
	l := lang.Of(base)
	return l == "javascript" || l == "typescript"
}

// isCheckFile reports whether a configured check's argv names p as what
// it runs or how: the executable or the script an interpreter runs
// (./scripts/test.sh, sh ci/lint.sh, python3 tools/check.py), a file given
// to a configuration flag (--config lint.json, --rcfile=.pylintrc), or the
// Makefile when it runs make (and so on for similar tools). A file a check
// merely reads as its input (grep -q x a.go, node --check calc.js) is not a
// check definition: it is what the check checks.
func (c Classifier) isCheckFile(p string) bool {
	for _, argv := range c.Checks {
		if len(argv) == 0 {
			continue
		}
		for _, d := range checkDefinitions(argv) {
			if d == p {
				return true
			}
		}
		switch path.Base(argv[0]) {
		case "make", "gmake":
			if p == "Makefile" || p == "makefile" || p == "GNUmakefile" {
				return true
			}
		case "npm", "yarn", "pnpm", "npx":
			if p == "package.json" {
				return true
			}
		case "just":
			if p == "justfile" || p == "Justfile" {
				return true
			}
		}
	}
	return false
}

// interpreters run the script named by their first non-flag argument.
var interpreters = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "python": true, "python3": true,
	"node": true, "perl": true, "ruby": true, "php": true, "lua": true, "luajit": true,
	"deno": true, "bun": true, "tsx": true, "ts-node": true, "pwsh": true,
}

// checkDefinitions returns the workspace paths argv names as definitions
// of what it runs, cleaned.
func checkDefinitions(argv []string) []string {
	clean := func(a string) string { return strings.TrimPrefix(path.Clean(a), "./") }
	out := []string{clean(argv[0])}
	exe := path.Base(argv[0])
	rest := argv[1:]
	switch {
	case interpreters[exe] && len(rest) > 0 && !strings.HasPrefix(rest[0], "-"):
		out = append(out, clean(rest[0]))
	case exe == "go" && len(rest) > 1 && rest[0] == "run":
		out = append(out, clean(rest[1]))
	}
	for i, a := range rest {
		if k, v, ok := strings.Cut(a, "="); ok && configFlag(exe, k) {
			out = append(out, clean(v))
		} else if configFlag(exe, a) && i+1 < len(rest) {
			out = append(out, clean(rest[i+1]))
		}
	}
	return out
}

// configFlag reports whether flag names a configuration file of tool exe.
func configFlag(exe, flag string) bool {
	if !strings.HasPrefix(flag, "-") {
		return false
	}
	f := strings.ToLower(strings.TrimLeft(flag, "-"))
	if (exe == "make" || exe == "gmake") && (f == "f" || f == "file" || f == "makefile") {
		return true
	}
	return strings.Contains(f, "config") || strings.Contains(f, "rcfile") || strings.Contains(f, "settings")
}
