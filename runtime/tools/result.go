package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"flow/internal/text"
	"flow/runtime/report"
)

// maxResultBytes bounds the UTF-8 length of a result's JSON text, on top of
// MaxResultChars characters, so that non-ASCII content cannot make one
// result several times larger in bytes than in characters.
const maxResultBytes = 2 * MaxResultChars

// maxErrorChars bounds an error message given to the model.
const maxErrorChars = 4000

// errorBody is the JSON shape of every tool error.
type errorBody struct {
	Status string `json:"status"`
	Error  string `json:"error"`
}

// fits reports whether a result's JSON text is within the bounds.
func fits(b []byte) bool {
	return len(b) <= maxResultBytes && utf8.RuneCount(b) <= MaxResultChars
}

// errorResult returns the tool error result for msg.
func errorResult(msg string) Result {
	msg = text.Truncate(msg, maxErrorChars)
	b, err := report.Marshal(errorBody{Status: report.StatusError, Error: msg})
	if err != nil || !fits(b) {
		// Unreachable with the cut above; keep the invariant regardless.
		b = []byte(`{"status":"error","error":"tool error message could not be encoded"}`)
	}
	return Result{Status: report.StatusError, Error: msg, Content: string(b)}
}

// errorf is errorResult with formatting.
func errorf(format string, args ...any) Result {
	return errorResult(fmt.Sprintf(format, args...))
}

// fit encodes build(total), the whole payload, when it is within the
// bounds. Otherwise it searches for the largest keep in [0, total) whose
// encoding fits and returns that with truncated true. build(keep) must cut
// the payload to keep units (characters, matches, files, ...) and mark the
// value truncated whenever keep < total. Each unit costs at least one
// character, so no keep above MaxResultChars is ever tried. When even
// build(0) is too big, the result is a fixed object carrying status. fit
// never fails.
func fit(status string, total int, build func(keep int) any) (content string, truncated bool) {
	if b, err := report.Marshal(build(total)); err == nil && fits(b) {
		return string(b), false
	}
	var best []byte
	lo, hi := 0, min(total-1, MaxResultChars)
	for lo <= hi {
		mid := lo + (hi-lo)/2
		b, err := report.Marshal(build(mid))
		if err == nil && fits(b) {
			best = b
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	if best == nil {
		return tooLarge(status), true
	}
	return string(best), true
}

// tooLarge is the last-resort result when no cut of the payload fits.
func tooLarge(status string) string {
	b, err := report.Marshal(map[string]any{
		"status":    status,
		"truncated": true,
		"error":     "the result was too large to return even without its content; narrow the request",
	})
	if err != nil || !fits(b) {
		return `{"status":"error","truncated":true}`
	}
	return string(b)
}

// validText returns s with each invalid UTF-8 sequence replaced by U+FFFD.
func validText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
