// Package textutil has small string helpers.
package textutil

import (
	"strings"
	"unicode"
)

// Initials returns the upper-cased first letter of every word of s.
func Initials(s string) string {
	var b strings.Builder
	for _, w := range strings.Fields(s) {
		for _, r := range w {
			b.WriteRune(unicode.ToUpper(r))
			break
		}
	}
	return b.String()
}
