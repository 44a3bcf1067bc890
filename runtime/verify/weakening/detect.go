package weakening

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"flow/internal/text"
	"flow/runtime/lang"
)

// Finding is one weakening edit in one file.
type Finding struct {
	Path string `json:"path"`
	// What is one of the What* values.
	What string `json:"what"`
	// Name is the test, case or marker concerned, when there is one.
	Name string `json:"name,omitempty"`
	// Line is the 1-based line in the new content (the old content for a
	// removal), 0 when the finding is about the whole file.
	Line int `json:"line,omitempty"`
	// Detail is one sentence for a person, naming the file.
	Detail string `json:"detail"`
}

// What values of a [Finding].
const (
	WhatTestFileDeleted   = "test_file_deleted"
	WhatTestRemoved       = "test_removed"
	WhatCasesRemoved      = "cases_removed"
	WhatSkipAdded         = "skip_added"
	WhatOnlyAdded         = "only_added"
	WhatAssertionsRemoved = "assertions_removed"
	WhatExpectedChanged   = "expected_changed"
	WhatFixtureChanged    = "fixture_changed"
	WhatCheckConfig       = "check_config_changed"
)

// maxFindings bounds the findings reported for one file.
const maxFindings = 20

// Change is one file's content before and after a run.
type Change struct {
	Path            string
	Before, After   []byte
	Existed, Exists bool
}

// Detect returns the weakening findings of one changed file, in line order.
// A source file is never weakening. A new test is not either, but a new
// file that stops the existing tests from running is (see newFile).
func (c Classifier) Detect(ch Change) []Finding {
	if !ch.Existed {
		return newFile(c.Classify(ch.Path), ch)
	}
	switch c.Classify(ch.Path) {
	case KindCheckConfig:
		return checkConfig(ch)
	case KindTest:
		return testFile(ch)
	}
	return nil
}

func testFile(ch Change) []Finding {
	if !ch.Exists {
		return []Finding{{Path: ch.Path, What: WhatTestFileDeleted,
			Detail: fmt.Sprintf("%s: the test file was deleted", ch.Path)}}
	}
	fam := familyOf(ch.Path)
	if fam == famOther && !isTestCode(ch.Path) {
		if string(ch.Before) == string(ch.After) {
			return nil
		}
		return []Finding{{Path: ch.Path, What: WhatFixtureChanged,
			Detail: fmt.Sprintf("%s: an existing test fixture was changed", ch.Path)}}
	}
	before, after := scan(fam, string(ch.Before)), scan(fam, string(ch.After))
	var out []Finding
	out = append(out, removedTests(ch, fam, before, after)...)
	out = append(out, markers(ch.Path, fam, before, after)...)
	out = append(out, assertions(ch.Path, fam, before, after)...)
	out = append(out, changedLiterals(ch.Path, fam, before, after)...)
	out = append(out, earlyReturns(ch.Path, fam, before, after)...)
	out = append(out, invertedAssertions(ch.Path, fam, before, after)...)
	out = append(out, trivialAssertions(ch.Path, fam, before, after)...)
	if fam == famGo {
		out = append(out, testMainNoRun(ch.Path, ch.Before, ch.After)...)
	}
	// Findings about a line come in line order; findings about the whole
	// file (Line 0) come after them.
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Line, out[j].Line
		if a == 0 || b == 0 {
			return a != 0 && b == 0
		}
		return a < b
	})
	if len(out) > maxFindings {
		out = out[:maxFindings]
	}
	return out
}

// testCodeLanguages are the languages, besides Go, Python and
// JavaScript/TypeScript, whose files under a test directory are test code
// rather than fixtures.
var testCodeLanguages = map[string]bool{
	"rust": true, "java": true, "kotlin": true, "ruby": true, "c": true, "cpp": true,
	"csharp": true, "swift": true, "lua": true, "bash": true, "elixir": true, "php": true,
	"scala": true,
}

// isTestCode tells source files of other languages (tests/foo.rs,
// FooTest.java) from fixtures (testdata/x.json).
func isTestCode(p string) bool {
	return testCodeLanguages[lang.Of(p)]
}

// testNames lists the tests a file defines, each once per definition.
func testNames(fam family, path string, src []byte, lines []codeLine) []named {
	switch fam {
	case famGo:
		if names, ok := goTests(src); ok {
			return names
		}
		return regexNames(lines, goTestRe, goRunRe)
	case famPython:
		return regexNames(lines, pyTestRe)
	case famJS:
		return regexNames(lines, jsTestRe)
	}
	return nil
}

type named struct {
	name string
	line int
}

var (
	goTestRe = regexp.MustCompile(`^func\s+((?:Test|Benchmark|Fuzz|Example)\w*)\s*\(`)
	goRunRe  = regexp.MustCompile(`\.Run\(\s*("(?:[^"\\]|\\.)*")`)
	pyTestRe = regexp.MustCompile(`^\s*(?:async\s+)?(?:def\s+(test\w*)\s*\(|class\s+(Test\w*))`)
	jsTestRe = regexp.MustCompile("\\b(?:it|test|describe|suite|context|specify)(?:\\.(?:only|skip|todo|concurrent|each\\([^)]*\\)))*\\s*\\(\\s*(\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`)")
)

func regexNames(lines []codeLine, res ...*regexp.Regexp) []named {
	var out []named
	for i, l := range lines {
		for _, re := range res {
			for _, m := range re.FindAllStringSubmatch(l.Code, -1) {
				for _, g := range m[1:] {
					if g != "" {
						out = append(out, named{name: g, line: i + 1})
					}
				}
			}
		}
	}
	return out
}

func removedTests(ch Change, fam family, before, after []codeLine) []Finding {
	old := testNames(fam, ch.Path, ch.Before, before)
	cur := testNames(fam, ch.Path, ch.After, after)
	left := map[string]int{}
	for _, n := range cur {
		left[n.name]++
	}
	var out []Finding
	for _, n := range old {
		if left[n.name] > 0 {
			left[n.name]--
			continue
		}
		out = append(out, Finding{Path: ch.Path, What: WhatTestRemoved, Name: n.name, Line: n.line,
			Detail: fmt.Sprintf("%s: the test %s was removed", ch.Path, n.name)})
	}
	if fam == famGo {
		out = append(out, removedCases(ch)...)
	}
	return out
}

// markerSet holds the patterns of a family's skip and only markers and
// assertions, matched against line shapes (literals blanked, so a marker
// inside a string does not count).
type markerSet struct {
	skip, only, assert []*regexp.Regexp
}

func res(patterns ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		out[i] = regexp.MustCompile(p)
	}
	return out
}

var markerSets = map[family]markerSet{
	famGo: {
		skip:   res(`\.\s*(?:Skip|SkipNow|Skipf)\s*\(`),
		assert: res(`\b\w+\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(`, `\b(?:assert|require|qt|is)\.\w+\s*\(`),
	},
	famPython: {
		skip: res(`@\s*(?:unittest\.)?(?:skip|skipIf|skipUnless|expectedFailure)\b`,
			`@\s*pytest\.mark\.(?:skip|skipif|xfail)\b`, `\bpytest\.(?:skip|xfail)\s*\(`,
			`\.skipTest\s*\(`, `\braise\s+(?:unittest\.)?SkipTest\b`),
		assert: res(`\bself\.assert\w*\s*\(`, `(?:^|[^.\w])assert\b`, `\bpytest\.raises\s*\(`, `\bself\.fail\s*\(`),
	},
	famJS: {
		skip: res(`\b(?:it|test|describe|suite|context|specify)\s*\.\s*(?:skip|todo)\b`,
			`\b(?:xit|xtest|xdescribe|xcontext|xspecify)\s*\(`, `\b(?:skip|todo)\s*:\s*(?:‹›|[^,}\s]+)`,
			`\bt\s*\.\s*(?:skip|todo)\s*\(`, `\bthis\s*\.\s*skip\s*\(`),
		only: res(`\b(?:it|test|describe|suite|context|specify)\s*\.\s*only\b`, `\b(?:fit|fdescribe)\s*\(`,
			`\bonly\s*:\s*(?:‹›|[^,}\s]+)`),
		assert: res(`\bexpect\s*\(`, `\bassert\b(?:\s*\.\s*\w+)?\s*\(`, `\bt\s*\.\s*(?:assert|equal|deepEqual|strictEqual|ok|is|throws|notEqual)\w*\s*\(`),
	},
	famOther: {
		skip:   res(`@(?:Disabled|Ignore)\b`, `#\[ignore\]`, `\b(?:xit|pending)\b`),
		assert: res(`\bassert\w*\b`, `\bexpect\b`),
	},
}

func count(lines []codeLine, rs []*regexp.Regexp) (n int, where []int) {
	for i, l := range lines {
		for _, re := range rs {
			k := len(re.FindAllStringIndex(l.Shape, -1))
			n += k
			for range k {
				where = append(where, i+1)
			}
		}
	}
	return n, where
}

func markers(p string, fam family, before, after []codeLine) []Finding {
	set := markerSets[fam]
	var out []Finding
	for _, kind := range []struct {
		what, noun string
		rs         []*regexp.Regexp
	}{{WhatSkipAdded, "a skip marker", set.skip}, {WhatOnlyAdded, "an only marker (other tests stop running)", set.only}} {
		if len(kind.rs) == 0 {
			continue
		}
		nb, _ := count(before, kind.rs)
		na, where := count(after, kind.rs)
		// The new markers are the last ones whose lines were not there
		// before; with counts alone, report the lines of markers on changed
		// lines first.
		added := na - nb
		if added <= 0 {
			continue
		}
		lines := newMarkerLines(before, after, kind.rs, where)
		for k := 0; k < added; k++ {
			line := 0
			if k < len(lines) {
				line = lines[k]
			}
			out = append(out, Finding{Path: p, What: kind.what, Line: line,
				Name:   markerText(after, line),
				Detail: fmt.Sprintf("%s: %s was added%s", p, kind.noun, onLine(line))})
		}
	}
	return out
}

// newMarkerLines returns the lines of after holding a marker on a line
// whose code did not exist before.
func newMarkerLines(before, after []codeLine, rs []*regexp.Regexp, where []int) []int {
	had := map[string]int{}
	for _, l := range before {
		had[l.Code]++
	}
	var out []int
	seen := map[int]bool{}
	for _, w := range where {
		if seen[w] {
			continue
		}
		seen[w] = true
		code := after[w-1].Code
		if had[code] > 0 {
			had[code]--
			continue
		}
		out = append(out, w)
	}
	return out
}

func markerText(lines []codeLine, line int) string {
	if line < 1 || line > len(lines) {
		return ""
	}
	return text.Clip(strings.TrimSpace(lines[line-1].Code), 80)
}

func onLine(line int) string {
	if line <= 0 {
		return ""
	}
	return fmt.Sprintf(" on line %d", line)
}

func assertions(p string, fam family, before, after []codeLine) []Finding {
	rs := markerSets[fam].assert
	nb, _ := count(before, rs)
	na, _ := count(after, rs)
	if na >= nb {
		return nil
	}
	return []Finding{{Path: p, What: WhatAssertionsRemoved,
		Detail: fmt.Sprintf("%s: %d of %d assertions were removed", p, nb-na, nb)}}
}

// changedLiterals pairs the removed and added lines of each hunk by shape:
// a line whose code is the same but for its literals changed an expected
// value (or the input it is checked with).
func changedLiterals(p string, fam family, before, after []codeLine) []Finding {
	old, cur := joinCode(before), joinCode(after)
	edits := udiff.Lines(old, cur)
	u, err := udiff.ToUnifiedDiff("a", "b", old, edits, 0)
	if err != nil {
		return nil
	}
	var out []Finding
	oldShapes := map[string][]int{} // shape → old line numbers, per hunk
	for _, h := range u.Hunks {
		clear(oldShapes)
		oldLine, newLine := h.FromLine, newStart(u.Hunks, h)
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Delete:
				s := before[oldLine-1].Shape
				if strings.Contains(s, "‹›") {
					oldShapes[s] = append(oldShapes[s], oldLine)
				}
				oldLine++
			case udiff.Insert:
				s := after[newLine-1].Shape
				if olds := oldShapes[s]; len(olds) > 0 && !messageLine.MatchString(s) {
					o := olds[0]
					oldShapes[s] = olds[1:]
					was, now := diffLits(before[o-1].Lits, after[newLine-1].Lits)
					out = append(out, Finding{Path: p, What: WhatExpectedChanged, Line: newLine,
						Name:   text.Clip(strings.TrimSpace(after[newLine-1].Code), 80),
						Detail: fmt.Sprintf("%s: a value in an existing test line changed on line %d (%s → %s)", p, newLine, was, now)})
				}
				newLine++
			default:
				oldLine++
				newLine++
			}
		}
	}
	return out
}

// messageLine matches lines that only print or report: a literal changed
// there is a message, not an expected value (t.Errorf("got %d, want 5")).
var messageLine = regexp.MustCompile(`^(?:\w+\.(?:Errorf|Fatalf|Error|Fatal|Logf|Log|Skipf|Skip)|fmt\.\w*[Pp]rint\w*|print|console\.(?:log|error|warn|info)|log\.\w+|logger\.\w+)\s*\(`)

// newStart is the 1-based new-side line where hunk h starts.
func newStart(hunks []*udiff.Hunk, h *udiff.Hunk) int {
	shift := 0
	for _, x := range hunks {
		if x == h {
			break
		}
		for _, l := range x.Lines {
			switch l.Kind {
			case udiff.Insert:
				shift++
			case udiff.Delete:
				shift--
			}
		}
	}
	return h.FromLine + shift
}

func joinCode(lines []codeLine) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.Code)
		b.WriteByte('\n')
	}
	return b.String()
}

// diffLits returns the first literal that differs between two lists of the
// same shape.
func diffLits(a, b []string) (string, string) {
	for i := range a {
		if i < len(b) && a[i] != b[i] {
			return text.Clip(a[i], 40), text.Clip(b[i], 40)
		}
	}
	return "?", "?"
}

// Sentence is the one sentence a report's reason gives for findings: the
// first one's detail, and how many more there are.
func Sentence(findings []Finding) string {
	switch len(findings) {
	case 0:
		return ""
	case 1:
		return findings[0].Detail
	}
	return fmt.Sprintf("%s (and %d more weakening edits)", findings[0].Detail, len(findings)-1)
}
