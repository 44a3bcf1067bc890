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
	"strings"
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

// Classify returns the kind of the slash-separated workspace path p.
func (c Classifier) Classify(p string) Kind {
	p = strings.TrimPrefix(path.Clean(p), "./")
	base := path.Base(p)
	if c.isCheckFile(p) {
		return KindCheckConfig
	}
	if configNames[base] {
		return KindCheckConfig
	}
	for _, pre := range configPrefixes {
		if strings.HasPrefix(base, pre) {
			return KindCheckConfig
		}
	}
	for _, d := range configDirs {
		if strings.HasPrefix(p, d+"/") {
			return KindCheckConfig
		}
	}
	for _, g := range c.Tests {
		if globMatch(g, p) {
			return KindTest
		}
	}
	for _, s := range testSuffixes {
		if strings.HasSuffix(base, s) {
			return KindTest
		}
	}
	if strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py") {
		return KindTest
	}
	for _, in := range testInfixes {
		if i := strings.Index(base, in); i > 0 && i+len(in) < len(base) && isScript(base) {
			return KindTest
		}
	}
	if strings.HasSuffix(base, "Test.java") || strings.HasSuffix(base, "Tests.java") ||
		strings.HasPrefix(p, "src/test/") || strings.Contains(p, "/src/test/") {
		return KindTest
	}
	for _, seg := range strings.Split(path.Dir(p), "/") {
		for _, d := range testDirs {
			if seg == d {
				return KindTest
			}
		}
	}
	return KindSource
}

func isScript(base string) bool {
	switch path.Ext(base) {
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return true
	}
	return false
}

// isCheckFile reports whether a configured check's argv names p: a script
// it runs, or the Makefile when it runs make (and so on for similar tools).
func (c Classifier) isCheckFile(p string) bool {
	for _, argv := range c.Checks {
		for i, a := range argv {
			a = strings.TrimPrefix(path.Clean(a), "./")
			if a == p {
				return true
			}
			if i == 0 {
				switch path.Base(a) {
				case "make", "gmake":
					if p == "Makefile" || p == "makefile" || p == "GNUmakefile" {
						return true
					}
				case "npm", "yarn", "pnpm", "npx":
					if p == "package.json" {
						return true
					}
				case "just":
					if p == "justfile" {
						return true
					}
				}
			}
		}
	}
	return false
}

// globMatch matches a slash-separated glob against p: each segment with
// path.Match, "**" for any number of segments, and a pattern without "/"
// against the base name.
func globMatch(pattern, p string) bool {
	pattern = strings.Trim(pattern, "/")
	if pattern == "" {
		return false
	}
	if !strings.Contains(pattern, "/") {
		ok, _ := path.Match(pattern, path.Base(p))
		return ok
	}
	return matchFrom(strings.Split(pattern, "/"), strings.Split(p, "/"))
}

func matchFrom(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 1 && pat[1] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 1 {
				return true
			}
			for i := 0; i <= len(segs); i++ {
				if matchFrom(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
