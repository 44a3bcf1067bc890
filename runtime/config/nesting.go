package config

import "fmt"

// MaxNesting bounds how deeply a configuration file may nest tables, arrays
// and dotted keys. flow's own schema needs three levels; the bound exists
// because the TOML decoder's memory grows with the square of the depth (a
// 25 kB file of nested inline tables costs it more than a gigabyte), and the
// file size cap alone does not bound that.
const MaxNesting = 64

// nestingError is the pre-scan's refusal of a too deeply nested file.
type nestingError struct{ line int }

func (e *nestingError) Error() string {
	return fmt.Sprintf("nesting deeper than %d levels (tables, arrays or dotted keys) at line %d; flow's configuration needs at most three levels, flatten the file", MaxNesting, e.line)
}

// level is one open inline table or array of the pre-scan.
type level struct {
	table bool // '{' rather than '['
	dots  int  // dotted-key components added by the current key of this table
}

// checkNesting scans a TOML document, without allocating per byte, and
// refuses it when the nesting depth exceeds MaxNesting: every open `{` or
// `[` outside strings and comments counts one level, a table header counts
// one level per component, and a dotted key adds one level per dot for as
// long as its value lasts. The four string forms (basic, literal and their
// multi-line variants) and comments are skipped, so brackets inside them do
// not count. It does not validate the document: whatever it lets through
// goes to the TOML decoder, which reports syntax errors.
func checkNesting(data []byte) error {
	s := &nestingScan{data: data, keyCtx: true, lineStart: true, line: 1}
	for ; s.i < len(data); s.i++ {
		if err := s.step(); err != nil {
			return err
		}
	}
	return nil
}

// nestingScan is the state of checkNesting's one pass: one method per
// byte that matters.
type nestingScan struct {
	data      []byte
	i         int // the byte under the scan
	stack     [MaxNesting + 1]level
	sp        int  // open inline tables and arrays
	depth     int  // the effective depth
	header    int  // levels of the current table header
	topDots   int  // dots of the current top-level key
	inHeader  bool // between a header's [ and ]
	keyCtx    bool // a key may come next (a '.' is a dotted key's)
	lineStart bool
	line      int
}

// step scans the byte at s.i.
func (s *nestingScan) step() error {
	c := s.data[s.i]
	if c == ' ' || c == '\t' || c == '\r' {
		return nil
	}
	atStart := s.lineStart
	s.lineStart = false
	switch c {
	case '\n':
		s.newline()
	case '#':
		s.skipComment()
	case '"', '\'':
		s.i, s.line = skipString(s.data, s.i, s.line)
	case '[':
		if s.sp == 0 && atStart {
			return s.tableHeader()
		}
		return s.open(level{}, false)
	case '{':
		return s.open(level{table: true}, true)
	case ']', '}':
		s.close(c)
	case ',':
		s.comma()
	case '=':
		s.keyCtx = false
	case '.':
		return s.dot()
	}
	return nil
}

// up adds one level of nesting.
func (s *nestingScan) up() error {
	s.depth++
	if s.depth > MaxNesting {
		return &nestingError{line: s.line}
	}
	return nil
}

// newline ends a top-level key's dotted levels outside inline values.
func (s *nestingScan) newline() {
	s.line++
	s.lineStart = true
	if s.sp == 0 {
		s.depth -= s.topDots
		s.topDots = 0
		s.keyCtx = true
	}
}

// skipComment skips to the end of the line.
func (s *nestingScan) skipComment() {
	for s.i+1 < len(s.data) && s.data[s.i+1] != '\n' {
		s.i++
	}
}

// tableHeader opens a table header, [a.b] or [[a.b]]: it replaces the
// previous header's levels.
func (s *nestingScan) tableHeader() error {
	s.depth -= s.header + s.topDots
	s.header, s.topDots = 0, 0
	if s.i+1 < len(s.data) && s.data[s.i+1] == '[' {
		s.i++
	}
	s.inHeader, s.keyCtx = true, true
	s.header++
	return s.up()
}

// open opens an inline array or table.
func (s *nestingScan) open(l level, keyCtx bool) error {
	if err := s.up(); err != nil {
		return err
	}
	s.stack[s.sp] = l
	s.sp++
	s.keyCtx = keyCtx
	return nil
}

// close ends a table header, or the innermost inline array or table with
// the dotted levels of its current key.
func (s *nestingScan) close(c byte) {
	if s.inHeader && c == ']' {
		s.inHeader, s.keyCtx = false, false
		if s.i+1 < len(s.data) && s.data[s.i+1] == ']' {
			s.i++
		}
		return
	}
	if s.sp > 0 {
		s.sp--
		s.depth -= 1 + s.stack[s.sp].dots
	}
	s.keyCtx = false
}

// comma ends a key of an inline table: its dotted levels go.
func (s *nestingScan) comma() {
	if s.sp > 0 && s.stack[s.sp-1].table {
		s.depth -= s.stack[s.sp-1].dots
		s.stack[s.sp-1].dots = 0
		s.keyCtx = true
	}
}

// dot is a dotted key's separator, where a key may stand; in a value it
// is a float's or a date-time's.
func (s *nestingScan) dot() error {
	if !s.keyCtx {
		return nil
	}
	switch {
	case s.inHeader:
		s.header++
	case s.sp == 0:
		s.topDots++
	default:
		s.stack[s.sp-1].dots++
	}
	return s.up()
}

// skipString skips the string that starts at data[i] (a quote) and returns
// the index of its last byte and the updated line number. An unterminated
// string ends at the end of its line (single-line forms) or of the data;
// the decoder reports it.
func skipString(data []byte, i, line int) (int, int) {
	q := data[i]
	if i+2 < len(data) && data[i+1] == q && data[i+2] == q {
		return skipMultiline(data, i+3, line, q)
	}
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			if q == '"' {
				i++
				if i < len(data) && data[i] == '\n' {
					line++ // invalid in a single-line string; the decoder says so
				}
			}
		case '\n':
			return i - 1, line // unterminated: let the newline be scanned
		case q:
			return i, line
		}
	}
	return len(data) - 1, line
}

// skipMultiline skips a multi-line string whose content starts at
// data[i], quoted by q, as skipString does.
func skipMultiline(data []byte, i, line int, q byte) (int, int) {
	for ; i < len(data); i++ {
		switch {
		case data[i] == '\n':
			line++
		case data[i] == '\\' && q == '"':
			i++
			if i < len(data) && data[i] == '\n' {
				line++
			}
		case data[i] == q && i+2 < len(data) && data[i+1] == q && data[i+2] == q:
			i += 2
			// Up to two more quotes belong to the content: """a""""
			for k := 0; k < 2 && i+1 < len(data) && data[i+1] == q; k++ {
				i++
			}
			return i, line
		}
	}
	return len(data) - 1, line
}
