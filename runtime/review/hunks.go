package review

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"flow/runtime/diff"
)

// contextLines is the unchanged context around each hunk, as git shows;
// changes closer than twice this join into one hunk.
const contextLines = 3

// hunk is one hunk of a file's change with the lines on either side. The
// sides include the context lines, which are the same on both, so that a
// revert replaces newSide by oldSide and checks the context on the way.
type hunk struct {
	id      string
	oldIdx  int // 0-based line of oldSide in the content before the run
	newIdx  int // 0-based line of newSide in the content the run left
	oldSide []string
	newSide []string
	text    string
	// whole is a binary file's change: one hunk replacing all of it.
	whole bool
}

// splitLines cuts text into lines that keep their "\n"; a last line
// without one is a line too.
func splitLines(text []byte) []string {
	var lines []string
	for len(text) > 0 {
		i := bytes.IndexByte(text, '\n')
		if i < 0 {
			lines = append(lines, string(text))
			break
		}
		lines = append(lines, string(text[:i+1]))
		text = text[i+1:]
	}
	return lines
}

// hunksOf returns the hunks that turn old into after, in order.
func hunksOf(path string, old, after []byte) []*hunk {
	if diff.IsBinary(old) || diff.IsBinary(after) {
		return []*hunk{{
			id:      hunkID(path, 0, 0, "binary", string(old), string(after)),
			oldSide: []string{string(old)}, newSide: []string{string(after)}, whole: true,
			text: fmt.Sprintf("Binary file %s differs (%d → %d bytes)\n", path, len(old), len(after)),
		}}
	}
	o, a := string(old), string(after)
	u, err := udiff.ToUnifiedDiff("a/"+path, "b/"+path, o, udiff.Lines(o, a), contextLines)
	if err != nil {
		// The edits come from the same library and text; treat an
		// inconsistency as one hunk of the whole file rather than lose it.
		return []*hunk{{id: hunkID(path, 0, 0, o, a), oldSide: splitLines(old), newSide: splitLines(after),
			text: "@@ whole file @@\n"}}
	}
	var out []*hunk
	for _, uh := range u.Hunks {
		h := &hunk{oldIdx: uh.FromLine - 1, newIdx: uh.ToLine - 1}
		var b strings.Builder
		for _, l := range uh.Lines {
			mark := " "
			switch l.Kind {
			case udiff.Delete:
				mark = "-"
				h.oldSide = append(h.oldSide, l.Content)
			case udiff.Insert:
				mark = "+"
				h.newSide = append(h.newSide, l.Content)
			default:
				h.oldSide = append(h.oldSide, l.Content)
				h.newSide = append(h.newSide, l.Content)
			}
			b.WriteString(mark + l.Content)
			if !strings.HasSuffix(l.Content, "\n") {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
		oldStart, oldLines, newStart, newLines := h.ranges()
		h.text = fmt.Sprintf("@@ -%d,%d +%d,%d @@\n", oldStart, oldLines, newStart, newLines) + b.String()
		h.id = hunkID(path, oldStart, newStart, h.text)
		out = append(out, h)
	}
	return out
}

// ranges gives the hunk's header numbers as git prints them: 1-based
// starts, and for an empty side the line before it.
func (h *hunk) ranges() (oldStart, oldLines, newStart, newLines int) {
	oldLines, newLines = len(h.oldSide), len(h.newSide)
	if h.whole {
		return 1, oldLines, 1, newLines
	}
	oldStart, newStart = h.oldIdx+1, h.newIdx+1
	if oldLines == 0 {
		oldStart--
	}
	if newLines == 0 {
		newStart--
	}
	return oldStart, oldLines, newStart, newLines
}

// hunkID derives a hunk's id from its file, position and text, so that
// every process computing the same run's hunks names them alike.
func hunkID(path string, oldStart, newStart int, parts ...string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d", path, oldStart, newStart)
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))[:10]
}
