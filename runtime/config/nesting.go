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
	var (
		stack     [MaxNesting + 1]level
		sp        int  // open inline tables and arrays
		depth     int  // the effective depth
		header    int  // levels of the current table header
		topDots   int  // dots of the current top-level key
		inHeader  bool // between a header's [ and ]
		keyCtx    = true
		lineStart = true
		line      = 1
	)
	up := func() error {
		depth++
		if depth > MaxNesting {
			return &nestingError{line: line}
		}
		return nil
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == ' ' || c == '\t' || c == '\r' {
			continue
		}
		atStart := lineStart
		lineStart = false
		switch c {
		case '\n':
			line++
			lineStart = true
			if sp == 0 {
				depth -= topDots
				topDots = 0
				keyCtx = true
			}
		case '#':
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			i, line = skipString(data, i, line)
		case '[':
			if sp == 0 && atStart {
				// A table header, [a.b] or [[a.b]]: it replaces the
				// previous header's levels.
				depth -= header + topDots
				header, topDots = 0, 0
				if i+1 < len(data) && data[i+1] == '[' {
					i++
				}
				inHeader, keyCtx = true, true
				header++
				if err := up(); err != nil {
					return err
				}
				continue
			}
			if err := up(); err != nil {
				return err
			}
			stack[sp] = level{}
			sp++
			keyCtx = false
		case '{':
			if err := up(); err != nil {
				return err
			}
			stack[sp] = level{table: true}
			sp++
			keyCtx = true
		case ']', '}':
			if inHeader && c == ']' {
				inHeader, keyCtx = false, false
				if i+1 < len(data) && data[i+1] == ']' {
					i++
				}
				continue
			}
			if sp > 0 {
				sp--
				depth -= 1 + stack[sp].dots
			}
			keyCtx = false
		case ',':
			if sp > 0 && stack[sp-1].table {
				depth -= stack[sp-1].dots
				stack[sp-1].dots = 0
				keyCtx = true
			}
		case '=':
			keyCtx = false
		case '.':
			if !keyCtx {
				continue // a float, or a date-time, in a value
			}
			switch {
			case inHeader:
				header++
			case sp == 0:
				topDots++
			default:
				stack[sp-1].dots++
			}
			if err := up(); err != nil {
				return err
			}
		}
	}
	return nil
}

// skipString skips the string that starts at data[i] (a quote) and returns
// the index of its last byte and the updated line number. An unterminated
// string ends at the end of its line (single-line forms) or of the data;
// the decoder reports it.
func skipString(data []byte, i, line int) (int, int) {
	q := data[i]
	multi := i+2 < len(data) && data[i+1] == q && data[i+2] == q
	if multi {
		i += 3
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
