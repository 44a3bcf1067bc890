package tools

import (
	"bytes"
	"fmt"
	"strings"
)

// Whitespace-tolerant line matching for file_edit. Small models often copy
// old_string with the wrong indentation (spaces for tabs, another depth),
// trailing spaces, or a missing or extra final newline. When old_string has
// no exact occurrence, file_edit compares whole lines with leading and
// trailing whitespace ignored and, when exactly one run of file lines
// matches, replaces those lines with new_string re-indented to the file.

// lineWS is the whitespace ignored at both ends of a line.
const lineWS = " \t\r\v\f"

// maxCandidatesShown bounds the line ranges an ambiguity error lists.
const maxCandidatesShown = 8

// textLine is one line of a file: its text data[start:end] without the
// line ending, the ending data[end:next] ("\n", "\r\n" or "" at the end).
type textLine struct{ start, end, next int }

// fileLines splits data into lines.
func fileLines(data []byte) []textLine {
	var out []textLine
	for off := 0; off < len(data); {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			out = append(out, textLine{off, len(data), len(data)})
			break
		}
		end := off + i
		if end > off && data[end-1] == '\r' {
			end--
		}
		out = append(out, textLine{off, end, off + i + 1})
		off += i + 1
	}
	return out
}

// textLines splits s into lines without their endings; a final line ending
// does not start another line.
func textLines(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, p := range parts {
		parts[i] = strings.TrimSuffix(p, "\r")
	}
	return parts
}

func isBlank(s string) bool { return strings.Trim(s, lineWS) == "" }

// indentOf returns the leading spaces and tabs of s.
func indentOf(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// trimBlank returns lines without up to maxLead blank lines at the start
// and up to maxTrail at the end, and how many of each it removed.
func trimBlank(lines []string, maxLead, maxTrail int) (out []string, lead, trail int) {
	for lead < maxLead && lead < len(lines) && isBlank(lines[lead]) {
		lead++
	}
	lines = lines[lead:]
	for trail < maxTrail && trail < len(lines) && isBlank(lines[len(lines)-1-trail]) {
		trail++
	}
	return lines[:len(lines)-trail], lead, trail
}

// lineMatcher finds the runs of file lines that match a pattern of lines
// with leading and trailing whitespace ignored.
type lineMatcher struct {
	data  []byte
	lines []textLine
}

func (m lineMatcher) text(i int) string {
	l := m.lines[i]
	return string(m.data[l.start:l.end])
}

// find returns the index of the first line of every run of consecutive
// file lines whose trimmed texts equal those of pat, in order (runs may
// overlap). It is linear in the file and pattern sizes (Knuth-Morris-Pratt
// over line identities), so no file and old_string make it slow.
func (m lineMatcher) find(pat []string) []int {
	if len(pat) == 0 || len(pat) > len(m.lines) {
		return nil
	}
	ids := map[string]int{}
	p := make([]int, len(pat))
	for i, s := range pat {
		k := strings.Trim(s, lineWS)
		id, ok := ids[k]
		if !ok {
			id = len(ids)
			ids[k] = id
		}
		p[i] = id
	}
	// fail[i] is the length of the longest proper border of p[:i+1].
	fail := make([]int, len(p))
	for i, k := 1, 0; i < len(p); i++ {
		for k > 0 && p[i] != p[k] {
			k = fail[k-1]
		}
		if p[i] == p[k] {
			k++
		}
		fail[i] = k
	}
	var out []int
	k := 0
	for i, l := range m.lines {
		id, ok := ids[string(bytes.Trim(m.data[l.start:l.end], lineWS))]
		if !ok {
			id = -1
		}
		for k > 0 && (k == len(p) || id != p[k]) {
			k = fail[k-1]
		}
		if id == p[k] {
			k++
		}
		if k == len(p) {
			out = append(out, i-len(p)+1)
		}
	}
	return out
}

// lineRanges formats the 1-based line ranges of n-line runs at starts.
func lineRanges(starts []int, n int) string {
	shown := starts[:min(len(starts), maxCandidatesShown)]
	parts := make([]string, len(shown))
	for i, s := range shown {
		parts[i] = lineRange(s, n)
	}
	out := strings.Join(parts, ", ")
	if len(starts) > len(shown) {
		out += fmt.Sprintf(" and %d more", len(starts)-len(shown))
	}
	return out
}

// lineRange formats the 1-based range of n lines from index start.
func lineRange(start, n int) string {
	if n == 1 {
		return fmt.Sprintf("line %d", start+1)
	}
	return fmt.Sprintf("lines %d-%d", start+1, start+n)
}

// replaceLines returns data with the n lines from index at replaced by
// repl (lines without endings), re-joined with the file's line ending. The
// last replaced line keeps its own ending; with no repl lines the lines
// are removed, endings included. Bytes outside the lines are untouched.
func (m lineMatcher) replaceLines(at, n int, repl []string) []byte {
	first, last := m.lines[at], m.lines[at+n-1]
	lo, hi := first.start, last.end
	if len(repl) == 0 {
		hi = last.next
	}
	eol := m.eol(at, n)
	var buf bytes.Buffer
	buf.Grow(len(m.data) + len(repl)*8)
	buf.Write(m.data[:lo])
	for i, s := range repl {
		if i > 0 {
			buf.WriteString(eol)
		}
		buf.WriteString(s)
	}
	buf.Write(m.data[hi:])
	return buf.Bytes()
}

// eol returns the line ending to join replacement lines with: that of the
// first of the n matched lines from at that has one, else the file's
// first, else "\n".
func (m lineMatcher) eol(at, n int) string {
	for _, l := range m.lines[at : at+n] {
		if l.next > l.end {
			return string(m.data[l.end:l.next])
		}
	}
	for _, l := range m.lines {
		if l.next > l.end {
			return string(m.data[l.end:l.next])
		}
	}
	return "\n"
}

// indentStyle is how a text indents one level: a tab, or width spaces.
type indentStyle struct {
	tab   bool
	width int
}

// level returns the indentation level of indent in style st, and the
// spaces left over (alignment). A tab is one level in either style.
func (st indentStyle) level(indent string) (level, extra int) {
	tabs := strings.Count(indent, "\t")
	spaces := len(indent) - tabs
	return tabs + spaces/st.width, spaces % st.width
}

// render returns the indentation of level levels plus extra spaces.
func (st indentStyle) render(level, extra int) string {
	if st.tab {
		return strings.Repeat("\t", level) + strings.Repeat(" ", extra)
	}
	return strings.Repeat(" ", level*st.width+extra)
}

// styleOf guesses how lines indent: with tabs when the first indented line
// starts with a tab (with tabs when the majority do, if majority is set),
// else with the most common increase of indentation between consecutive
// non-blank lines as the width (def when there is none).
func styleOf(lines []string, majority bool, def int) indentStyle {
	tabs, spaces := 0, 0
	for _, s := range lines {
		if isBlank(s) {
			continue
		}
		switch ind := indentOf(s); {
		case ind == "":
		case ind[0] == '\t':
			tabs++
		default:
			spaces++
		}
		if !majority && tabs+spaces > 0 {
			break
		}
	}
	if tabs > spaces {
		return indentStyle{tab: true, width: def}
	}
	var steps [9]int
	prev := -1
	for _, s := range lines {
		if isBlank(s) {
			continue
		}
		ind := indentOf(s)
		if strings.Contains(ind, "\t") {
			prev = -1
			continue
		}
		if d := len(ind) - prev; prev >= 0 && d >= 2 && d <= 8 {
			steps[d]++
		}
		prev = len(ind)
	}
	best := 0
	for d := 2; d <= 8; d++ {
		if steps[d] > steps[best] {
			best = d
		}
	}
	if best == 0 {
		best = def
	}
	return indentStyle{width: best}
}

// reindenter maps the indentation of new_string's lines to the file's,
// from how the matched old_string lines correspond to the file lines.
type reindenter struct {
	old, file []string // the matched lines, pairwise
	model     indentStyle
	target    indentStyle
}

func newReindenter(m lineMatcher, at int, old, newLines []string) reindenter {
	file := make([]string, len(old))
	for i := range old {
		file[i] = m.text(at + i)
	}
	all := make([]string, len(m.lines))
	for i := range m.lines {
		all[i] = m.text(i)
	}
	target := styleOf(file, false, 0)
	if !hasIndent(file) {
		target = styleOf(all, true, 4)
	}
	if target.width == 0 {
		target.width = styleOf(all, true, 4).width
	}
	model := styleOf(append(append([]string{}, old...), newLines...), false, target.width)
	return reindenter{old: old, file: file, model: model, target: target}
}

// hasIndent reports whether any line is indented.
func hasIndent(lines []string) bool {
	for _, s := range lines {
		if !isBlank(s) && indentOf(s) != "" {
			return true
		}
	}
	return false
}

// line returns s (a line of new_string) with the file's indentation: that
// of the matched file line when s equals (ignoring trailing whitespace) a
// matched old_string line with the same indentation; else that of the file
// lines matching old lines of s's indentation when they agree; else s's
// level relative to old_string's first line, applied to the first matched
// file line's level in the file's style. Blank lines become empty.
func (r reindenter) line(s string) string {
	if isBlank(s) {
		return ""
	}
	ind := indentOf(s)
	body := strings.TrimRight(s[len(ind):], lineWS)
	for i, o := range r.old {
		if indentOf(o) == ind && strings.Trim(o, lineWS) == body {
			return indentOf(r.file[i]) + body
		}
	}
	mapped, agree := "", true
	for i, o := range r.old {
		if isBlank(o) || indentOf(o) != ind {
			continue
		}
		f := indentOf(r.file[i])
		if mapped != "" && f != mapped {
			agree = false
		}
		mapped = f
	}
	if mapped != "" && agree {
		return mapped + body
	}
	l0, _ := r.model.level(indentOf(r.old[0]))
	lf, _ := r.target.level(indentOf(r.file[0]))
	l, extra := r.model.level(ind)
	return r.target.render(max(lf+l-l0, 0), extra) + body
}

// closestLine returns the index of the file line most like s (by edit
// distance of the trimmed texts, each cut to 120 bytes) and whether it is
// alike enough to name: at most 40% of the longer text differs.
func (m lineMatcher) closestLine(s string) (int, bool) {
	const cut = 120
	want := []byte(strings.Trim(s, lineWS))
	want = want[:min(len(want), cut)]
	if len(want) == 0 {
		return 0, false
	}
	best, bestScore := -1, 1.0
	row := make([]int, cut+1)
	for i, l := range m.lines {
		got := bytes.Trim(m.data[l.start:l.end], lineWS)
		got = got[:min(len(got), cut)]
		longer := max(len(want), len(got))
		if len(got) == 0 || float64(abs(len(want)-len(got)))/float64(longer) >= bestScore {
			continue
		}
		score := float64(editDistance(want, got, row)) / float64(longer)
		if score < bestScore {
			best, bestScore = i, score
		}
	}
	return best, best >= 0 && bestScore <= 0.4
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// editDistance is the Levenshtein distance of a and b; row has room for
// len(b)+1 ints.
func editDistance(a, b []byte, row []int) int {
	row = row[:len(b)+1]
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		diag := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			up := row[j]
			row[j] = min(row[j]+1, row[j-1]+1, diag+cost)
			diag = up
		}
	}
	return row[len(b)]
}
