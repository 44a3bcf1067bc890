package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"flow/internal/text"
)

// maxProblems bounds how many problems one [Error] reports, so that a large
// broken file still yields a readable message.
const maxProblems = 16

// Error is a configuration error. The CLI recognises it with [errors.As],
// prints "flow: <message>" and exits with status 2.
type Error struct {
	// Problems lists what is wrong, each problem naming its key, in a
	// stable order. It is never empty.
	Problems []string
	// Path is the configuration file the problems were found in, or "".
	Path string
	// Lines holds, for each problem, the 1-based line of Path it is about,
	// or 0 when unknown. It is nil without a Path.
	Lines []int
	// Err is the underlying cause (an I/O or TOML syntax error), if any.
	Err error
}

// Error joins the problems with "; ". With a Path, it starts with the file
// and each problem with its line, as compilers do: "FILE:3: problem" for one
// problem, "FILE: line 3: p1; line 7: p2" for several.
func (e *Error) Error() string {
	shown := e.Problems
	if len(shown) > maxProblems {
		shown = shown[:maxProblems]
	}
	parts := make([]string, len(shown))
	for i, p := range shown {
		parts[i] = p
		if e.Path != "" && len(shown) > 1 && i < len(e.Lines) && e.Lines[i] > 0 {
			parts[i] = fmt.Sprintf("line %d: %s", e.Lines[i], p)
		}
	}
	msg := strings.Join(parts, "; ")
	if extra := len(e.Problems) - len(shown); extra > 0 {
		msg += fmt.Sprintf("; and %d more problems", extra)
	}
	if e.Path == "" {
		return msg
	}
	if len(shown) == 1 && len(e.Lines) > 0 && e.Lines[0] > 0 {
		return fmt.Sprintf("%s:%d: %s", showPath(e.Path), e.Lines[0], msg)
	}
	return showPath(e.Path) + ": " + msg
}

// locate records the file and, from its text, the line of each problem.
func (e *Error) locate(path string, data []byte) {
	e.Path = path
	lines := keyLines(data)
	e.Lines = make([]int, len(e.Problems))
	for i, p := range e.Problems {
		e.Lines[i] = lineOf(lines, problemKey(p))
	}
	// Problems read best in the file's order; those without a line last.
	order := make([]int, len(e.Problems))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		la, lb := e.Lines[order[a]], e.Lines[order[b]]
		if la == 0 || lb == 0 {
			return la != 0 && lb == 0
		}
		return la < lb
	})
	problems, lineNums := make([]string, len(order)), make([]int, len(order))
	for k, i := range order {
		problems[k], lineNums[k] = e.Problems[i], e.Lines[i]
	}
	e.Problems, e.Lines = problems, lineNums
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// errorf returns an *Error with one formatted problem.
func errorf(cause error, format string, args ...any) *Error {
	return &Error{Problems: []string{fmt.Sprintf(format, args...)}, Err: cause}
}

// problems collects validation problems in the order they are found.
type problems []string

func (p *problems) add(format string, args ...any) {
	*p = append(*p, fmt.Sprintf(format, args...))
}

// err returns nil when nothing was found, or an *Error.
func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &Error{Problems: p}
}

// maxShown bounds names quoted in messages: a key from the file is shown in
// full only when it is short and printable.
const maxShown = 80

// show renders a name taken from the file for a one-line message: plain when
// printable and short, otherwise Go-quoted and truncated, so that control
// characters can never reach the terminal.
func show(s string) string {
	if printable(s) && len(s) <= maxShown {
		return s
	}
	return strconv.Quote(text.Clip(s, maxShown))
}

// showPath renders a path for a message: plain when printable, otherwise
// Go-quoted. Paths are never truncated.
func showPath(s string) string {
	if printable(s) {
		return s
	}
	return strconv.Quote(s)
}

// printable reports whether s is valid UTF-8 made of graphic characters
// (letters, marks, numbers, punctuation, symbols and spaces).
func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsGraphic(r) || r == unicode.ReplacementChar {
			return false
		}
	}
	return true
}

// maxListed bounds the names listed in an "Unknown ... options" message.
const maxListed = 10

// nameList renders sorted names as "a, b, c", eliding after maxListed.
func nameList(sorted []string) string {
	shown := make([]string, 0, min(len(sorted), maxListed))
	for i, n := range sorted {
		if i == maxListed {
			break
		}
		shown = append(shown, show(n))
	}
	s := strings.Join(shown, ", ")
	if extra := len(sorted) - len(shown); extra > 0 {
		s += fmt.Sprintf(" and %d more", extra)
	}
	return s
}
