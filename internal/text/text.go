// Package text holds the few string helpers every layer needs to put
// bounded text in front of a person or a model: one line of at most n
// characters, the first line of a message, the first or last n
// characters, the last n lines, and a counted noun. It counts characters
// as Unicode code points (only [ClipBytes] counts bytes) and depends on
// the standard library only.
package text

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis marks text that was cut.
const Ellipsis = "…"

// OneLine collapses whitespace runs (newlines included) to single spaces
// and cuts s to at most n characters, the last of them Ellipsis when it
// cut.
func OneLine(s string, n int) string {
	return Clip(strings.Join(strings.Fields(s), " "), n)
}

// Clip cuts s to at most n characters, the last of them Ellipsis when it
// cut (nothing when n < 1).
func Clip(s string, n int) string {
	if n < 1 {
		return ""
	}
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	return Truncate(s, n-1) + Ellipsis
}

// ClipBytes cuts s to at most n bytes on a character boundary, the last
// three of them Ellipsis when it cut (nothing when n cannot hold the mark).
// It is for text whose bound is a size on the wire, such as a message
// in a protocol frame, where the bytes and not the characters are what
// the limit protects.
func ClipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len(Ellipsis)
	if n < 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + Ellipsis
}

// FirstLine returns the first line of s, surrounding whitespace trimmed,
// in at most n characters. It ends in Ellipsis when it left something
// out: after a space when it dropped later lines, so that a reader can
// tell a message that goes on from one that was cut, and directly when
// it cut the line itself.
func FirstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if first, _, more := strings.Cut(s, "\n"); more {
		s = strings.TrimRightFunc(first, unicode.IsSpace) + " " + Ellipsis
	}
	return Clip(s, n)
}

// LastLines returns the last n lines of s, without its final line ending,
// and how many lines it left out.
func LastLines(s string, n int) (string, int) {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "", 0
	}
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s, 0
	}
	n = max(n, 0)
	return strings.Join(lines[len(lines)-n:], "\n"), len(lines) - n
}

// Truncate returns the first n characters of s, without a mark.
func Truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n { // the byte length bounds the character count
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

// Tail returns the last n characters of s, without a mark.
func Tail(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	skip := utf8.RuneCountInString(s) - n
	if skip <= 0 {
		return s
	}
	i := 0
	for k := range s {
		if i == skip {
			return s[k:]
		}
		i++
	}
	return ""
}

// Count is n things: "1 tool call", "3 tool calls". The plural adds "s".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// LowerFirst lowers the first letter of a sentence so that it can follow
// a comma, unless the sentence starts with a name or an acronym (a capital
// not followed by a lower-case letter: "README", "Go" is lowered only when
// the second letter is lower case).
func LowerFirst(s string) string {
	if len(s) > 1 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'a' && s[1] <= 'z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}
