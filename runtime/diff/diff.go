// Package diff renders what a run changed in a file as a bounded unified diff
// for reports and front ends. The line diff itself comes from go-udiff (a
// maintained export of the Go tools' diff package); this package adds what
// flow needs around it: byte bounds cut at a line, binary detection, added and
// removed counts, the first changed line of each hunk for editors, and an ANSI
// rendering for terminals.
package diff

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

	"flow/runtime/report"
)

// DefaultLimit bounds one file's diff text in a report, in bytes.
const DefaultLimit = 16000

// contextLines is the unchanged context around each hunk, as git shows.
const contextLines = 3

// File compares before and after of the workspace file path. existed and
// exists say whether the file was there before and is there after, so that
// an empty file and a missing one differ. limit bounds the diff text in bytes
// (0 means [DefaultLimit]); a diff over it is cut at a line boundary, ends
// with a marker line and has Truncated set. Counts and hunk lines always
// describe the whole change.
func File(path string, before, after []byte, existed, exists bool, limit int) report.FileDiff {
	if limit <= 0 {
		limit = DefaultLimit
	}
	d := report.FileDiff{Path: path, Change: change(existed, exists), Hunks: []int{}}
	if IsBinary(before) || IsBinary(after) {
		d.Binary = true
		if !bytes.Equal(before, after) || existed != exists {
			d.Diff = fmt.Sprintf("Binary file %s differs (%d → %d bytes)\n", path, len(before), len(after))
			d.Hunks = append(d.Hunks, 1)
		}
		return d
	}
	from, to := "a/"+path, "b/"+path
	if !existed {
		from = "/dev/null"
	}
	if !exists {
		to = "/dev/null"
	}
	old, cur := string(before), string(after)
	edits := udiff.Lines(old, cur)
	u, err := udiff.ToUnifiedDiff(from, to, old, edits, contextLines)
	if err != nil {
		// The edits come from the same library and the same text; an
		// inconsistency is a bug there, reported in the diff rather than lost.
		d.Diff = "diff unavailable: " + err.Error() + "\n"
		return d
	}
	shift := 0 // new line number minus old line number before the current hunk
	for _, h := range u.Hunks {
		line := h.FromLine + shift // 1-based new-side line where the hunk starts
		first := 0
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				d.Added++
			case udiff.Delete:
				d.Removed++
			}
		}
		for _, l := range h.Lines {
			if l.Kind != udiff.Equal {
				break
			}
			first++
		}
		n := line + first
		if n < 1 {
			n = 1
		}
		d.Hunks = append(d.Hunks, n)
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				shift++
			case udiff.Delete:
				shift--
			}
		}
	}
	d.Diff, d.Truncated = bound(u.String(), limit)
	return d
}

func change(existed, exists bool) string {
	switch {
	case !existed && exists:
		return report.ChangeAdded
	case existed && !exists:
		return report.ChangeDeleted
	default:
		return report.ChangeModified
	}
}

// IsBinary treats content with a NUL byte or invalid UTF-8 as binary, as git
// and the file tools do.
func IsBinary(b []byte) bool {
	return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b)
}

// bound cuts text to at most limit bytes at a line boundary and appends a
// marker line saying so; the marker is counted inside the limit.
func bound(text string, limit int) (string, bool) {
	if len(text) <= limit {
		return text, false
	}
	marker := fmt.Sprintf("… diff cut at %d of %d bytes\n", limit, len(text))
	room := limit - len(marker)
	if room < 0 {
		room = 0
	}
	cut := strings.LastIndexByte(text[:room], '\n') + 1
	return text[:cut] + marker, true
}

// Stat is a diffstat line such as "+3 -1" for a report's file.
func Stat(d report.FileDiff) string {
	if d.Binary {
		return "binary"
	}
	return fmt.Sprintf("+%d -%d", d.Added, d.Removed)
}

// ANSI colours a unified diff for a terminal: file headers bold, hunk headers
// cyan, removals red, additions green. Other lines are left as they are.
func ANSI(text string) string {
	var b strings.Builder
	b.Grow(len(text) + len(text)/8)
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		body := strings.TrimSuffix(line, "\n")
		nl := line[len(body):]
		code := ""
		switch {
		case strings.HasPrefix(body, "+++ "), strings.HasPrefix(body, "--- "):
			code = "1"
		case strings.HasPrefix(body, "@@"):
			code = "36"
		case strings.HasPrefix(body, "+"):
			code = "32"
		case strings.HasPrefix(body, "-"):
			code = "31"
		}
		if code == "" {
			b.WriteString(line)
			continue
		}
		b.WriteString("\x1b[" + code + "m" + body + "\x1b[0m" + nl)
	}
	return b.String()
}
