package config

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
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
	// Error does not include it; the problems keep the reference messages.
	Path string
	// Err is the underlying cause (an I/O or TOML syntax error), if any.
	Err error
}

// Error joins the problems with "; ".
func (e *Error) Error() string {
	if len(e.Problems) <= maxProblems {
		return strings.Join(e.Problems, "; ")
	}
	return fmt.Sprintf("%s; and %d more problems",
		strings.Join(e.Problems[:maxProblems], "; "), len(e.Problems)-maxProblems)
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
	if r := []rune(s); len(r) > maxShown {
		s = string(r[:maxShown]) + "..."
	}
	return strconv.Quote(s)
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
