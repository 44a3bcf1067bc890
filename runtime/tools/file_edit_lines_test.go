package tools

import (
	"bytes"
	"strings"
	"testing"
)

// TestFileEditLines covers the whitespace-tolerant line match file_edit
// falls back to when old_string has no exact occurrence.
func TestFileEditLines(t *testing.T) {
	goFile := "package a\n\nfunc f(x int) int {\n\tif x > 0 {\n\t\treturn 1\n\t}\n\treturn 0\n}\n"
	pyFile := "class Calc:\n    def sub(self, a, b):\n        return a - b\n\n    def add(self, a, b):\n        return a + b\n"
	tests := []struct {
		name    string
		file    string
		args    map[string]any
		want    string // file content afterwards
		matched string // the result's matched ("" = absent)
		wantErr []string
	}{
		{"spaces for tabs", goFile,
			map[string]any{"old_string": "    if x > 0 {\n        return 1\n    }", "new_string": "    if x > 0 {\n        return 2\n    }"},
			strings.Replace(goFile, "return 1", "return 2", 1), "lines 4-6, ignoring indentation and trailing whitespace", nil},
		{"shallower indentation", goFile,
			map[string]any{"old_string": "if x > 0 {\n\treturn 1\n}", "new_string": "if x > 1 {\n\treturn 1\n}"},
			strings.Replace(goFile, "x > 0", "x > 1", 1), "lines 4-6, ignoring indentation and trailing whitespace", nil},
		{"deeper indentation", "a:\n  b: 1\n  c: 2\n",
			map[string]any{"old_string": "      b: 1\n      c: 2", "new_string": "      b: 1\n      c: 3"},
			"a:\n  b: 1\n  c: 3\n", "lines 2-3, ignoring indentation and trailing whitespace", nil},
		{"trailing spaces", "x = 1\ny = 2\n",
			map[string]any{"old_string": "x = 1  \ny = 2 ", "new_string": "x = 1\ny = 3"},
			"x = 1\ny = 3\n", "lines 1-2, ignoring indentation and trailing whitespace", nil},
		{"extra final newline", "a\nb",
			map[string]any{"old_string": "b\n", "new_string": "c\n"}, "a\nc", "line 2, ignoring indentation and trailing whitespace", nil},
		{"CRLF file", "one\r\n\ttwo\r\nthree\r\n",
			map[string]any{"old_string": "one\n  two\n", "new_string": "one\n  two\n  2b\n"},
			"one\r\n\ttwo\r\n\t2b\r\nthree\r\n", "lines 1-2, ignoring indentation and trailing whitespace", nil},
		{"blank lines around old_string", "a\n\tb\nc\n",
			map[string]any{"old_string": "\n\n    b\n\n", "new_string": "\n\n    B\n\n"},
			"a\n\tB\nc\n", "line 2, ignoring indentation and trailing whitespace", nil},
		{"delete lines", "a\n\tb\n\tc\nd\n",
			map[string]any{"old_string": "  b\n  c\n", "new_string": ""}, "a\nd\n", "lines 2-3, ignoring indentation and trailing whitespace", nil},
		{"multi-line new_string re-indented", goFile,
			map[string]any{"old_string": "    return 0", "new_string": "    if x < -5 {\n        return -1\n    }\n    return 0"},
			strings.Replace(goFile, "\treturn 0\n", "\tif x < -5 {\n\t\treturn -1\n\t}\n\treturn 0\n", 1),
			"line 7, ignoring indentation and trailing whitespace", nil},
		{"python block keeps its indentation", pyFile,
			map[string]any{"old_string": "def sub(self, a, b):\n  return a - b", "new_string": "def sub(self, a, b):\n  if a < b:\n    return b - a\n  return a - b"},
			strings.Replace(pyFile, "        return a - b\n", "        if a < b:\n            return b - a\n        return a - b\n", 1),
			"lines 2-3, ignoring indentation and trailing whitespace", nil},
		{"exact match preferred", "\tv := 1\nv := 1\n",
			map[string]any{"old_string": "\nv := 1", "new_string": "\nv := 2"}, "\tv := 1\nv := 2\n", "", nil},
		{"two candidates refused", "func a() {\n\treturn 0\n}\nfunc b() {\n\treturn 0\n}\n",
			map[string]any{"old_string": "  return 0\n}", "new_string": "  return 1\n}"},
			"func a() {\n\treturn 0\n}\nfunc b() {\n\treturn 0\n}\n", "",
			[]string{"matches 2 places: lines 2-3, lines 5-6", "add more surrounding lines"}},
		{"replace_all is exact only", "\tv\n",
			map[string]any{"old_string": "  v\n", "new_string": "w\n", "replace_all": true}, "\tv\n", "",
			[]string{"replace_all=true replaces exact occurrences only", "set replace_all to false"}},
		{"lines joined into one", "export function camelCase(s) {\n  const words = s.split(\" \");\n  return words\n    .map((w) => w)\n    .join(\"\");\n}\n",
			map[string]any{"old_string": "const words = s.split(\" \"); return words .map((w) => w)", "new_string": "const words = s.split(/[ _-]+/); return words .map((w) => w)"},
			"export function camelCase(s) {\n  const words = s.split(/[ _-]+/); return words .map((w) => w)\n    .join(\"\");\n}\n",
			"lines 2-4, ignoring differences of whitespace and line breaks", nil},
		{"a line broken in two", "x = f(a, b)\ny = 2\n",
			map[string]any{"old_string": "x = f(a,\n      b)", "new_string": "x = f(a, c)"}, "x = f(a, c)\ny = 2\n",
			"line 1, ignoring differences of whitespace and line breaks", nil},
		{"outer whitespace of old_string kept out", "x a\nb y\n",
			map[string]any{"old_string": " a  b ", "new_string": " c "}, "x c y\n",
			"lines 1-2, ignoring differences of whitespace and line breaks", nil},
		{"two places ignoring whitespace refused", "a  b\nc\na b\n",
			map[string]any{"old_string": "a\n b", "new_string": "z"}, "a  b\nc\na b\n", "",
			[]string{"ignoring differences of whitespace and line breaks it matches 2 places or more"}},
		{"not found names the nearest line", "package a\n\nfunc add(a, b int) int {\n\treturn a - b\n}\n",
			map[string]any{"old_string": "\treturn a + b\n", "new_string": "\treturn a * b\n"},
			"package a\n\nfunc add(a, b int) int {\n\treturn a - b\n}\n", "",
			[]string{"old_string was not found in f.txt", `line 4: "return a - b"`, "call file_read with start_line=1 and end_line=5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDisk(t, true, map[string]string{"f.txt": tc.file})
			r := New(d, Options{Trusted: true})
			args := map[string]any{"path": "f.txt"}
			for k, v := range tc.args {
				args[k] = v
			}
			res, body := call(t, r, "coder", "file_edit", mustJSON(t, args))
			if got := readDisk(t, d, "f.txt"); got != tc.want {
				t.Errorf("file after edit = %q, want %q", got, tc.want)
			}
			if tc.wantErr != nil {
				for _, w := range tc.wantErr {
					if res.Status != "error" || !strings.Contains(res.Error, w) || res.Changed != "" {
						t.Errorf("file_edit = %s, want an error containing %q", res.Content, w)
					}
				}
				return
			}
			if res.Status != "ok" || res.Changed != "f.txt" {
				t.Fatalf("file_edit = %s, changed %q", res.Content, res.Changed)
			}
			m, has := body["matched"]
			if tc.matched == "" && has || tc.matched != "" && m != tc.matched {
				t.Errorf("matched = %v, want %q", m, tc.matched)
			}
			if body["replacements"] != 1.0 || body["sha256"] != hexSum(tc.want) || body["bytes"] != float64(len(tc.want)) {
				t.Errorf("file_edit result = %s", res.Content)
			}
		})
	}
}

// FuzzSpaceMatches: every range spaceMatches returns holds old_string's
// text with whitespace runs collapsed, within the data, in order, and
// with whitespace (or an end of the data) where old_string has it outside.
func FuzzSpaceMatches(f *testing.F) {
	f.Add([]byte("func f() {\n\treturn x\n}\n"), "f() { return x }")
	f.Add([]byte("a  b\nc\na b\n"), "a\n b")
	f.Add([]byte("\tfret x"), "  ret")
	f.Fuzz(func(t *testing.T, data []byte, old string) {
		prev := -1
		for _, m := range spaceMatches(data, old, 16) {
			lo, hi := m[0], m[1]
			if lo <= prev || lo >= hi || hi > len(data) {
				t.Fatalf("range %v after %d in %d bytes", m, prev, len(data))
			}
			prev = lo
			if got, want := collapseSpaces(string(data[lo:hi])), collapseSpaces(old); got != want {
				t.Fatalf("data[%d:%d] = %q collapses to %q, want %q", lo, hi, data[lo:hi], got, want)
			}
			if isSpaceByte(data[lo]) || isSpaceByte(data[hi-1]) {
				t.Fatalf("range %v starts or ends with whitespace", m)
			}
			if isSpaceByte(old[0]) && lo > 0 && !isSpaceByte(data[lo-1]) {
				t.Fatalf("range %v has no whitespace before it, as old_string has", m)
			}
		}
	})
}

// FuzzFileEditLines: a tolerant line replacement never changes bytes
// outside the replaced lines.
func FuzzFileEditLines(f *testing.F) {
	f.Add("a\n\tb\r\nc\n", "  b", "x\ny")
	f.Add("x\n  y\n  z", "y\nz\n", "")
	f.Add("\n\n", "q", "r")
	f.Fuzz(func(t *testing.T, file, oldS, newS string) {
		old, _, _ := trimBlank(textLines(oldS), len(oldS), len(oldS))
		if len(old) == 0 {
			return
		}
		m := lineMatcher{data: []byte(file), lines: fileLines([]byte(file))}
		for _, at := range m.find(old) {
			for i, s := range old {
				if strings.Trim(s, lineWS) != strings.Trim(m.text(at+i), lineWS) {
					t.Fatalf("find matched line %d %q for %q", at+i, m.text(at+i), s)
				}
			}
			nl := textLines(newS)
			re := newReindenter(m, at, old, nl)
			repl := make([]string, len(nl))
			for i, s := range nl {
				repl[i] = re.line(s)
			}
			out := m.replaceLines(at, len(old), repl)
			lo, hi := m.lines[at].start, m.lines[at+len(old)-1].next
			if !bytes.HasPrefix(out, []byte(file[:lo])) || !bytes.HasSuffix(out, []byte(file[hi:])) || len(out) < lo+len(file)-hi {
				t.Fatalf("replacing lines %d+%d of %q with %q gave %q", at, len(old), file, repl, out)
			}
		}
	})
}

// BenchmarkFileEditLinesWorstCase is the line match on a 256 KiB file of
// identical lines against an old_string of 10,000 of them and one that
// matches nowhere: the case a naive line-by-line comparison makes
// quadratic.
func BenchmarkFileEditLinesWorstCase(b *testing.B) {
	data := []byte(strings.Repeat("x\n", 131072))
	old := textLines(strings.Repeat("  x\n", 10000) + "y\n")
	m := lineMatcher{data: data, lines: fileLines(data)}
	for b.Loop() {
		if got := m.find(old); len(got) != 0 {
			b.Fatalf("find = %d candidates, want none", len(got))
		}
	}
}
