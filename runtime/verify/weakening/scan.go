package weakening

import (
	"strings"

	"flow/runtime/lang"
)

// family is a group of languages that share comment and string syntax and
// test conventions.
type family int

const (
	famOther family = iota
	famGo
	famPython
	famJS
)

// familyOf returns the family of the file at p by its language, as
// lang.Of decides it.
func familyOf(p string) family {
	switch lang.Of(p) {
	case "go":
		return famGo
	case "python":
		return famPython
	case "javascript", "typescript":
		return famJS
	}
	return famOther
}

// codeLine is one source line with comments removed: Code keeps string
// contents, Shape replaces every literal (string, number, boolean, nil) by
// "‹›" so that two lines differing only in literal values have equal
// shapes, and Lits lists the literals in order.
type codeLine struct {
	Code  string
	Shape string
	Lits  []string
}

// keywordLits are identifiers that are literal values.
var keywordLits = map[string]bool{
	"true": true, "false": true, "nil": true, "True": true, "False": true, "None": true,
	"null": true, "undefined": true, "NaN": true,
}

// scan splits src into lines without comments and computes each line's
// shape. It is a small lexer, not a parser: enough to tell code from
// comments and literals in Go, Python and JavaScript/TypeScript, and a
// C-like default for the rest.
func scan(fam family, src string) []codeLine {
	var (
		lines []codeLine
		code  strings.Builder
		shape strings.Builder
		lits  []string
	)
	flush := func() {
		lines = append(lines, codeLine{Code: strings.TrimRight(code.String(), " \t\r"), Shape: strings.TrimSpace(shape.String()), Lits: lits})
		code.Reset()
		shape.Reset()
		lits = nil
	}
	// prev is the last significant character written to the shape, to tell
	// a binary minus from a negative number.
	prev := byte(0)
	lineComment := "//"
	if fam == famPython {
		lineComment = "#"
	}
	blockComments := fam != famPython
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			flush()
			prev = 0
			i++
		case strings.HasPrefix(src[i:], lineComment):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case blockComments && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				end = len(src) - i - 2
			}
			body := src[i : i+2+end]
			for range strings.Count(body, "\n") {
				flush()
			}
			i += 2 + end + 2
			if i > len(src) {
				i = len(src)
			}
		case isQuote(fam, c):
			lit, n := stringLit(fam, src[i:])
			// A literal spanning lines keeps the line count right: its
			// text stays on the line where it starts.
			code.WriteString(strings.ReplaceAll(lit, "\n", " "))
			shape.WriteString("‹›")
			lits = append(lits, lit)
			for range strings.Count(lit, "\n") {
				flush()
			}
			prev = '"'
			i += n
		case isDigit(c) || (c == '-' && i+1 < len(src) && isDigit(src[i+1]) && unaryContext(prev)):
			j := i + 1
			for j < len(src) && (isIdent(src[j]) || src[j] == '.' || ((src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E'))) {
				j++
			}
			code.WriteString(src[i:j])
			shape.WriteString("‹›")
			lits = append(lits, src[i:j])
			prev = '0'
			i = j
		case isIdent(c):
			j := i
			for j < len(src) && isIdent(src[j]) {
				j++
			}
			word := src[i:j]
			code.WriteString(word)
			if keywordLits[word] {
				shape.WriteString("‹›")
				lits = append(lits, word)
			} else {
				shape.WriteString(word)
			}
			prev = 'a'
			i = j
		default:
			code.WriteByte(c)
			if c == ' ' || c == '\t' || c == '\r' {
				if shape.Len() > 0 {
					shape.WriteByte(' ')
				}
			} else {
				shape.WriteByte(c)
				prev = c
			}
			i++
		}
	}
	flush()
	// Collapse the runs of spaces the shape got from indentation and
	// removed comments, so that whitespace never makes shapes differ.
	for k := range lines {
		lines[k].Shape = strings.Join(strings.Fields(lines[k].Shape), " ")
	}
	return lines
}

func isQuote(fam family, c byte) bool {
	switch c {
	case '"', '\'':
		return true
	case '`':
		return fam == famGo || fam == famJS
	}
	return false
}

// stringLit returns the string literal at the start of s and its length,
// honouring escapes, Python's triple quotes and string prefixes already
// consumed as identifiers (r"", b"", f"" keep their prefix as an ident,
// which is harmless for shapes). An unterminated literal runs to the end of
// its line (or of the input for raw and triple-quoted strings).
func stringLit(fam family, s string) (string, int) {
	q := s[0]
	if fam == famPython && (strings.HasPrefix(s, `"""`) || strings.HasPrefix(s, `'''`)) {
		end := strings.Index(s[3:], s[:3])
		if end < 0 {
			return s, len(s)
		}
		return s[:3+end+3], 3 + end + 3
	}
	multiline := q == '`'
	for j := 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if q != '`' || fam == famJS {
				j++
			}
		case '\n':
			if !multiline {
				return s[:j], j
			}
		case q:
			return s[:j+1], j + 1
		}
	}
	return s, len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdent(c byte) bool {
	return c == '_' || c == '$' || isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

// unaryContext reports whether a '-' after prev starts a negative number
// rather than a subtraction.
func unaryContext(prev byte) bool {
	switch prev {
	case 'a', '0', '"', ')', ']', '}':
		return false
	}
	return true
}
