package tools

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"strings"
	"unicode/utf8"

	"flow/bufferfs"
	"flow/internal/text"
	"flow/runtime/report"
)

//go:embed file_read.md
var fileReadRaw string

var fileReadDoc = strings.TrimSpace(fileReadRaw)

// fileReadArgs are the arguments of file_read.
type fileReadArgs struct {
	Path      string `json:"path" desc:"file path relative to the workspace root"`
	StartLine *int   `json:"start_line,omitempty" desc:"first line to return, from 1 (default 1)"`
	EndLine   *int   `json:"end_line,omitempty" desc:"last line to return, inclusive (default: the last line)"`
}

// readBody is the result of file_read.
type readBody struct {
	Status     string `json:"status"`
	Path       string `json:"path"`
	Content    string `json:"content"`
	Bytes      int64  `json:"bytes"`
	TotalLines int    `json:"total_lines"`
	SHA256     string `json:"sha256"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	Truncated  bool   `json:"truncated,omitempty"`
	Hint       string `json:"hint,omitempty"`
}

// fileRead implements file_read.
func (r *Registry) fileRead(ctx context.Context, args fileReadArgs) Result {
	p := args.Path
	start, hasStart := given(args.StartLine)
	end, hasEnd := given(args.EndLine)
	switch {
	case hasStart && start < 1:
		return errorf("start_line must be 1 or more, got %d; lines are numbered from 1", start)
	case hasEnd && end < 1:
		return errorf("end_line must be 1 or more, got %d; lines are numbered from 1", end)
	case hasStart && hasEnd && start > end:
		return errorf("start_line (%d) is after end_line (%d); give start_line <= end_line (both 1-based and inclusive)", start, end)
	}
	f, err := r.fs.Read(ctx, p, bufferfs.MaxFileBytes)
	if err != nil {
		if alt, note, ok := r.missingAlternative(ctx, p, err); ok {
			args.Path = alt
			return withNote(r.fileRead(ctx, args), note)
		}
		return fsError(FileRead, p, err)
	}
	total := countLines(f.Data)
	from, to := 1, total
	if hasStart {
		from = start
	}
	if hasEnd {
		to = min(end, total)
	}
	if total == 0 {
		from, to = 0, 0
	} else if from > total {
		return errorf("start_line %d is past the end of %s, which has %d lines; use a start_line from 1 to %d",
			start, text.Truncate(f.Path, 200), total, total)
	}
	lo, hi := lineSpan(f.Data, from, to)
	body := readBody{
		Status:     report.StatusOK,
		Path:       cleanPath(f.Path, p),
		Content:    validText(f.Data[lo:hi]),
		Bytes:      int64(len(f.Data)),
		TotalLines: total,
		SHA256:     fileHash(f),
		StartLine:  from,
		EndLine:    to,
	}
	chars := utf8.RuneCountInString(body.Content)
	content, truncated := fit(report.StatusOK, chars, func(keep int) any {
		if keep >= chars {
			return body
		}
		return body.cut(keep)
	})
	return Result{Status: report.StatusOK, Content: content, Truncated: truncated}
}

// cut returns b with its content cut to at most keep characters (fewer
// than it has), at a line end when at least one whole line fits, and a hint
// how to read on.
func (b readBody) cut(keep int) readBody {
	c := text.Truncate(b.Content, keep)
	if i := strings.LastIndexByte(c, '\n'); i >= 0 {
		c = c[:i+1]
	}
	lines := strings.Count(c, "\n")
	b.Truncated = true
	switch {
	case c == "":
		b.EndLine = b.StartLine - 1
		b.Hint = fmt.Sprintf("no line fitted in the result limit of %d characters; lines of this file are very long", MaxResultChars)
	case lines == 0:
		// One line longer than the limit: return its beginning.
		b.EndLine = b.StartLine
		b.Hint = fmt.Sprintf("line %d is longer than the result limit of %d characters and was cut", b.StartLine, MaxResultChars)
	default:
		b.EndLine = b.StartLine + lines - 1
		b.Hint = fmt.Sprintf("content was cut to fit the result limit: lines %d-%d of %d returned; "+
			"call file_read with start_line=%d and end_line=%d to read on",
			b.StartLine, b.EndLine, b.TotalLines, b.EndLine+1, min(b.EndLine+lines, b.TotalLines))
	}
	b.Content = c
	return b
}

// countLines returns the number of lines of data; a final newline does not
// start a new line, and empty data has none.
func countLines(data []byte) int {
	if len(data) == 0 {
		return 0
	}
	n := bytes.Count(data, []byte{'\n'})
	if data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// lineSpan returns the byte range of lines from..to (1-based, inclusive,
// each with its newline). from > to gives an empty range.
func lineSpan(data []byte, from, to int) (lo, hi int) {
	if from < 1 || from > to {
		return 0, 0
	}
	lo = lineStart(data, 0, from-1)
	hi = lineStart(data, lo, to-from+1)
	return lo, hi
}

// lineStart returns the offset just after the n-th newline at or after off,
// or len(data) when there are fewer.
func lineStart(data []byte, off, n int) int {
	for ; n > 0; n-- {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return len(data)
		}
		off += i + 1
	}
	return off
}

// fileHash returns the SHA-256 of f, computing it when the FS did not.
func fileHash(f bufferfs.File) string {
	if f.SHA256 != "" {
		return f.SHA256
	}
	return sha256Hex(f.Data)
}

// cleanPath returns the FS's cleaned path, or the cleaned given path.
func cleanPath(fromFS, given string) string {
	if fromFS != "" {
		return fromFS
	}
	if clean, err := bufferfs.ValidPath(given); err == nil {
		return clean
	}
	return given
}
