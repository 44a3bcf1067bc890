package tools

import (
	"bytes"
	"strings"
)

// The last fallback of file_edit: old_string matched with every run of
// whitespace, line breaks included, taken as one space. A small model
// copies code with several lines joined into one ("f() { return x }"), or
// a line broken in two; when exactly one place of the file has the same
// text with whitespace runs equal, that place is replaced by new_string
// as it is, and the result says so.

// spaceNorm is a text with every whitespace run collapsed to one space,
// with the byte range each of its bytes came from.
type spaceNorm struct {
	text       []byte
	start, end []int // text[i] came from data[start[i]:end[i]]
}

// isSpaceByte reports whether c is ASCII whitespace.
func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// normSpaces collapses data's whitespace runs, keeping where each byte
// came from.
func normSpaces(data []byte) spaceNorm {
	n := spaceNorm{text: make([]byte, 0, len(data)), start: make([]int, 0, len(data)), end: make([]int, 0, len(data))}
	for i := 0; i < len(data); {
		j := i + 1
		c := data[i]
		if isSpaceByte(c) {
			for j < len(data) && isSpaceByte(data[j]) {
				j++
			}
			c = ' '
		}
		n.text = append(n.text, c)
		n.start = append(n.start, i)
		n.end = append(n.end, j)
		i = j
	}
	return n
}

// collapseSpaces returns s trimmed, with each whitespace run one space.
func collapseSpaces(s string) string {
	return string(normSpaces([]byte(strings.TrimSpace(s))).text)
}

// spaceMatches returns the byte ranges of data whose text equals old with
// whitespace runs collapsed, at most limit of them; none when old is only
// whitespace. old's leading and trailing whitespace is not part of the
// match, but where old has it, the match must have whitespace (or the
// file's start or end) there too: "  ret" matches the "ret" of "\tret x",
// not of "fret".
func spaceMatches(data []byte, old string, limit int) [][2]int {
	needle := []byte(collapseSpaces(old))
	if len(needle) == 0 {
		return nil
	}
	spaceBefore := isSpaceByte(old[0])
	spaceAfter := isSpaceByte(old[len(old)-1])
	n := normSpaces(data)
	var out [][2]int
	for from := 0; len(out) < limit; {
		i := bytes.Index(n.text[from:], needle)
		if i < 0 {
			break
		}
		at := from + i
		from = at + 1
		lo, hi := n.start[at], n.end[at+len(needle)-1]
		if spaceBefore && lo > 0 && !isSpaceByte(data[lo-1]) || spaceAfter && hi < len(data) && !isSpaceByte(data[hi]) {
			continue
		}
		out = append(out, [2]int{lo, hi})
	}
	return out
}

// trimLikeOld drops from newS the leading and trailing whitespace that old
// has, when newS has the same: the match excludes old's outer whitespace,
// so new_string's copy of it would be doubled.
func trimLikeOld(old, newS string) string {
	lead := old[:len(old)-len(strings.TrimLeft(old, " \t\r\n\v\f"))]
	trail := old[len(strings.TrimRight(old, " \t\r\n\v\f")):]
	newS = strings.TrimPrefix(newS, lead)
	return strings.TrimSuffix(newS, trail)
}

// lineOf returns the 0-based line index of byte offset off in data.
func lineOf(data []byte, off int) int {
	return bytes.Count(data[:off], []byte("\n"))
}
