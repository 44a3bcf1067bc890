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
	lx := newLexer(fam, src)
	for lx.i < len(lx.src) {
		lx.step()
	}
	lx.flush()
	// Collapse the runs of spaces the shape got from indentation and
	// removed comments, so that whitespace never makes shapes differ.
	for k := range lx.lines {
		lx.lines[k].Shape = strings.Join(strings.Fields(lx.lines[k].Shape), " ")
	}
	return lx.lines
}

// lexer is scan's state: the input and its position, the line being built
// and the lines done.
type lexer struct {
	fam           family
	src           string
	i             int
	lineComment   string
	blockComments bool
	// prev is the last significant character written to the shape, to tell
	// a binary minus from a negative number.
	prev  byte
	lines []codeLine
	code  strings.Builder
	shape strings.Builder
	lits  []string
}

func newLexer(fam family, src string) *lexer {
	lx := &lexer{fam: fam, src: src, lineComment: "//", blockComments: fam != famPython}
	if fam == famPython {
		lx.lineComment = "#"
	}
	return lx
}

// flush ends the line being built.
func (lx *lexer) flush() {
	lx.lines = append(lx.lines, codeLine{Code: strings.TrimRight(lx.code.String(), " \t\r"), Shape: strings.TrimSpace(lx.shape.String()), Lits: lx.lits})
	lx.code.Reset()
	lx.shape.Reset()
	lx.lits = nil
}

// step consumes one token at lx.i: a newline, a comment, a literal, a word
// or one other character.
func (lx *lexer) step() {
	c := lx.src[lx.i]
	rest := lx.src[lx.i:]
	switch {
	case c == '\n':
		lx.flush()
		lx.prev = 0
		lx.i++
	case strings.HasPrefix(rest, lx.lineComment):
		lx.skipLineComment()
	case lx.blockComments && strings.HasPrefix(rest, "/*"):
		lx.skipBlockComment()
	case isQuote(lx.fam, c):
		lx.stringLiteral()
	case lx.atNumber():
		lx.number()
	case isIdent(c):
		lx.word()
	default:
		lx.other(c)
	}
}

// literal writes the literal text lit to the line: as itself in the code,
// as "‹›" in the shape.
func (lx *lexer) literal(code, lit string) {
	lx.code.WriteString(code)
	lx.shape.WriteString("‹›")
	lx.lits = append(lx.lits, lit)
}

// skipLineComment drops the text up to the end of the line.
func (lx *lexer) skipLineComment() {
	for lx.i < len(lx.src) && lx.src[lx.i] != '\n' {
		lx.i++
	}
}

// skipBlockComment drops a /* */ comment (an unterminated one runs to the
// end of the input), keeping one empty line per line it spans.
func (lx *lexer) skipBlockComment() {
	end := strings.Index(lx.src[lx.i+2:], "*/")
	if end < 0 {
		end = len(lx.src) - lx.i - 2
	}
	body := lx.src[lx.i : lx.i+2+end]
	for range strings.Count(body, "\n") {
		lx.flush()
	}
	lx.i = min(lx.i+2+end+2, len(lx.src))
}

// stringLiteral writes the string literal at lx.i.
func (lx *lexer) stringLiteral() {
	lit, n := stringLit(lx.fam, lx.src[lx.i:])
	// A literal spanning lines keeps the line count right: its text stays
	// on the line where it starts.
	lx.literal(strings.ReplaceAll(lit, "\n", " "), lit)
	for range strings.Count(lit, "\n") {
		lx.flush()
	}
	lx.prev = '"'
	lx.i += n
}

// atNumber reports whether a number starts at lx.i: a digit, or a minus
// before a digit where no operand precedes it.
func (lx *lexer) atNumber() bool {
	src, i := lx.src, lx.i
	if isDigit(src[i]) {
		return true
	}
	return src[i] == '-' && i+1 < len(src) && isDigit(src[i+1]) && unaryContext(lx.prev)
}

// number writes the number at lx.i, with its sign, fraction, exponent and
// any suffix letters.
func (lx *lexer) number() {
	src := lx.src
	j := lx.i + 1
	for j < len(src) && (isIdent(src[j]) || src[j] == '.' || ((src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E'))) {
		j++
	}
	lx.literal(src[lx.i:j], src[lx.i:j])
	lx.prev = '0'
	lx.i = j
}

// word writes the identifier at lx.i; the keywords that are values
// (true, nil, None, …) are literals.
func (lx *lexer) word() {
	j := lx.i
	for j < len(lx.src) && isIdent(lx.src[j]) {
		j++
	}
	word := lx.src[lx.i:j]
	if keywordLits[word] {
		lx.literal(word, word)
	} else {
		lx.code.WriteString(word)
		lx.shape.WriteString(word)
	}
	lx.prev = 'a'
	lx.i = j
}

// other writes one character that starts no token: blanks become one space
// in the shape (none at its start), anything else is itself.
func (lx *lexer) other(c byte) {
	lx.code.WriteByte(c)
	if c == ' ' || c == '\t' || c == '\r' {
		if lx.shape.Len() > 0 {
			lx.shape.WriteByte(' ')
		}
	} else {
		lx.shape.WriteByte(c)
		lx.prev = c
	}
	lx.i++
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
