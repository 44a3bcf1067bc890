package tools

import (
	"bytes"
	"context"
	_ "embed"
	"strings"

	"flow/bufferfs"
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
		return fsError(FileEdit, p, err)
	}
	f.Exists = true
	shown := cutRunes(cleanPath(f.Path, p), 200)
	n := bytes.Count(f.Data, []byte(oldS))
	switch {
	case n == 0:
		msg := "old_string was not found in " + shown + "; the file differs from what you expect: call file_read on it " +
			"and copy the exact text, including indentation and line breaks"
		if t := strings.TrimSpace(oldS); t != oldS && t != "" && bytes.Contains(f.Data, []byte(t)) {
			msg += " (the text exists, but with different leading or trailing whitespace)"
		}
		return errorResult(msg)
	case n > 1 && !all:
		return errorf("old_string occurs %d times in %s; add surrounding lines to old_string so that it matches exactly once, "+
			"or set replace_all to true to replace all %d occurrences", n, shown, n)
	}
	if !all {
		n = 1
	}
	data := bytes.Replace(f.Data, []byte(oldS), []byte(newS), n)
	return r.apply(ctx, FileEdit, p, f, data, func(path string) any {
		return editBody{Status: report.StatusOK, Path: path, Replacements: n, Bytes: len(data), SHA256: sha256Hex(data)}
	})
}
