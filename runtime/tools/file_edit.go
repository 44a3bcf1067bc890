package tools

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"strings"

	"flow/bufferfs"
	"flow/internal/text"
	"flow/runtime/report"
)

//go:embed file_edit.md
var fileEditRaw string

var fileEditDoc = strings.TrimSpace(fileEditRaw)

// fileEditArgs are the arguments of file_edit.
type fileEditArgs struct {
	Path       string `json:"path" desc:"file path relative to the workspace root"`
	OldString  string `json:"old_string" desc:"exact text to replace, copied from the file"`
	NewString  string `json:"new_string" desc:"text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" desc:"replace every occurrence instead of exactly one (default false)"`
}

// editBody is the result of file_edit.
type editBody struct {
	Status       string `json:"status"`
	Path         string `json:"path"`
	Replacements int    `json:"replacements"`
	Bytes        int    `json:"bytes"`
	SHA256       string `json:"sha256"`
	// Matched says which lines were replaced when old_string matched only
	// with indentation or whitespace runs ignored; absent for an exact
	// match.
	Matched string `json:"matched,omitempty"`
	// EditorDiagnostics are the editor's error diagnostics for the file
	// right after the edit (inside Neovim with a language server only).
	EditorDiagnostics *bufferfs.EditDiagnostics `json:"editor_diagnostics,omitempty"`
}

// fileEdit implements file_edit.
func (r *Registry) fileEdit(ctx context.Context, args fileEditArgs) Result {
	p, oldS, newS, all := args.Path, args.OldString, args.NewString, args.ReplaceAll
	if oldS == "" {
		return errorResult("old_string is empty; copy the exact text to replace from file_read, or use file_write to create or replace a whole file")
	}
	if oldS == newS {
		return errorResult("old_string and new_string are identical, so the edit would change nothing; put the new text in new_string")
	}
	f, err := r.fs.Read(ctx, p, bufferfs.MaxFileBytes)
	if err != nil {
		if alt, note, ok := r.missingAlternative(ctx, p, err); ok {
			args.Path = alt
			return withNote(r.fileEdit(ctx, args), note)
		}
		return fsError(FileEdit, p, err)
	}
	f.Exists = true
	shown := text.Truncate(cleanPath(f.Path, p), 200)
	n := bytes.Count(f.Data, []byte(oldS))
	if !all && n == 1 {
		n = occurrences(f.Data, []byte(oldS)) // "x\nx" is twice in "x\nx\nx"
	}
	switch {
	case n == 0 && all:
		return errorResult(editNotFound(f.Data, oldS, shown, true))
	case n == 0:
		return r.editLines(ctx, p, f, oldS, newS, shown)
	case n > 1 && !all:
		return errorf("old_string occurs %d times in %s; add surrounding lines to old_string so that it matches exactly once, "+
			"or set replace_all to true to replace all %d occurrences", n, shown, n)
	}
	if !all {
		n = 1
	}
	data := bytes.Replace(f.Data, []byte(oldS), []byte(newS), n)
	return r.apply(ctx, FileEdit, p, f, data, func(path string, diags *bufferfs.EditDiagnostics) any {
		return editBody{Status: report.StatusOK, Path: path, Replacements: n, Bytes: len(data), SHA256: sha256Hex(data), EditorDiagnostics: diags}
	})
}

// editLines is file_edit when old_string has no exact occurrence: it
// replaces the one run of whole lines that matches old_string's lines with
// leading and trailing whitespace ignored (blank lines at old_string's
// start and end ignored too) by new_string, re-indented to the file, and
// says so in the result's matched. The write takes the same path as an
// exact edit.
func (r *Registry) editLines(ctx context.Context, p string, f bufferfs.File, oldS, newS, shown string) Result {
	all := textLines(oldS)
	oldLines, lead, trail := trimBlank(all, len(all), len(all))
	if len(oldLines) == 0 {
		return errorResult(editNotFound(f.Data, oldS, shown, false))
	}
	m := lineMatcher{data: f.Data, lines: fileLines(f.Data)}
	starts := m.find(oldLines)
	switch {
	case len(starts) == 0:
		return r.editSpaces(ctx, p, f, oldS, newS, shown)
	case len(starts) > 1:
		return errorf("old_string was not found exactly in %s, and ignoring indentation and trailing whitespace it matches %d places: %s; "+
			"add more surrounding lines to old_string, copied with file_read, so that it matches only one",
			shown, len(starts), lineRanges(starts, len(oldLines)))
	}
	at := starts[0]
	newLines, _, _ := trimBlank(textLines(newS), lead, trail)
	if isBlankText(newLines) {
		newLines = nil
	}
	re := newReindenter(m, at, oldLines, newLines)
	repl := make([]string, len(newLines))
	for i, s := range newLines {
		repl[i] = re.line(s)
	}
	data := m.replaceLines(at, len(oldLines), repl)
	return r.applyMatched(ctx, p, f, data, lineRange(at, len(oldLines)), "ignoring indentation and trailing whitespace", shown,
		" re-indented to the file")
}

// editSpaces is file_edit when old_string matches neither exactly nor line
// by line: it replaces the one place whose text equals old_string with
// every whitespace run, line breaks included, taken as one space (see
// spaceMatches) by new_string, and says so in the result's matched.
func (r *Registry) editSpaces(ctx context.Context, p string, f bufferfs.File, oldS, newS, shown string) Result {
	found := spaceMatches(f.Data, oldS, maxCandidatesShown+1)
	switch {
	case len(found) == 0:
		return errorResult(editNotFound(f.Data, oldS, shown, false))
	case len(found) > 1:
		return errorf("old_string was not found exactly in %s, and ignoring differences of whitespace and line breaks it matches %d places or more; "+
			"add more surrounding lines to old_string, copied with file_read, so that it matches only one", shown, len(found))
	}
	lo, hi := found[0][0], found[0][1]
	var buf bytes.Buffer
	buf.Grow(len(f.Data) + len(newS))
	buf.Write(f.Data[:lo])
	buf.WriteString(trimLikeOld(oldS, newS))
	buf.Write(f.Data[hi:])
	data := buf.Bytes()
	first, last := lineOf(f.Data, lo), lineOf(f.Data, hi-1)
	return r.applyMatched(ctx, p, f, data, lineRange(first, last-first+1), "ignoring differences of whitespace and line breaks", shown, "")
}

// applyMatched writes data, the file after a tolerant match of lines
// (how says what was ignored), with matched in the result; a replacement
// that changes nothing is an error. how is also in that error, with note
// on what was done to new_string.
func (r *Registry) applyMatched(ctx context.Context, p string, f bufferfs.File, data []byte, lines, how, shown, note string) Result {
	if bytes.Equal(data, f.Data) {
		return errorf("old_string matches %s of %s %s, and new_string%s leaves them unchanged; put the changed text in new_string",
			lines, shown, how, note)
	}
	matched := lines + ", " + how
	return r.apply(ctx, FileEdit, p, f, data, func(path string, diags *bufferfs.EditDiagnostics) any {
		return editBody{Status: report.StatusOK, Path: path, Replacements: 1, Bytes: len(data), SHA256: sha256Hex(data), Matched: matched, EditorDiagnostics: diags}
	})
}

// isBlankText reports whether every line is blank.
func isBlankText(lines []string) bool {
	for _, s := range lines {
		if !isBlank(s) {
			return false
		}
	}
	return true
}

// editNotFound is the error for an old_string that matches nowhere: it names
// the file line most like old_string's first non-blank line and the
// file_read call to see it, when one is alike enough. all says replace_all
// was set, which matches exactly only.
func editNotFound(data []byte, oldS, shown string, all bool) string {
	msg := "old_string was not found in " + shown + "; the file differs from what you expect"
	if all {
		msg = "old_string was not found exactly in " + shown + " (replace_all=true replaces exact occurrences only; " +
			"set replace_all to false to let one occurrence match ignoring indentation and trailing whitespace)"
	}
	first := ""
	for _, s := range textLines(oldS) {
		if !isBlank(s) {
			first = s
			break
		}
	}
	m := lineMatcher{data: data, lines: fileLines(data)}
	if i, ok := m.closestLine(first); ok {
		span := max(len(textLines(oldS)), 1)
		msg += fmt.Sprintf("; the line most like old_string's first line is line %d: %q; call file_read with start_line=%d and end_line=%d "+
			"and copy the exact text from there, including indentation and line breaks",
			i+1, text.Truncate(strings.Trim(m.text(i), lineWS), 120), max(i+1-3, 1), min(i+span+3, len(m.lines)))
	} else {
		msg += ": call file_read on it and copy the exact text, including indentation and line breaks"
	}
	if t := strings.TrimSpace(oldS); t != oldS && t != "" && bytes.Contains(data, []byte(t)) {
		msg += " (the text exists, but with different leading or trailing whitespace)"
	}
	return msg
}

// occurrences counts the places old occurs in data, overlapping ones too.
func occurrences(data, old []byte) int {
	n := 0
	for i := 0; len(old) > 0; i++ {
		j := bytes.Index(data[i:], old)
		if j < 0 {
			break
		}
		n++
		i += j
	}
	return n
}
