package check

import (
	"strings"
	"unicode/utf8"
)

// OutputTail is how many bytes of each output stream a check result keeps:
// the last OutputTail bytes (doc/design.md §15).
const OutputTail = 16000

// tail is an io.Writer that keeps only the last limit bytes written to it, in
// a fixed buffer, and counts everything it was given. It never grows beyond
// limit bytes whatever the amount of output, so a check that prints without
// end costs neither memory nor disk.
//
// A tail is not safe for concurrent use; each output stream has its own,
// written by a single goroutine and read after that goroutine is done.
type tail struct {
	limit int
	buf   []byte // len(buf) < limit until the buffer first fills
	start int    // index of the oldest byte once len(buf) == limit
	total int64  // bytes ever written
}

// newTail returns a tail keeping the last limit bytes (0 when limit < 0).
func newTail(limit int) *tail {
	limit = max(limit, 0)
	return &tail{limit: limit, buf: make([]byte, 0, limit)}
}

// Write keeps the end of p; it never fails.
func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	t.total += int64(n)
	if n >= t.limit {
		// p alone fills the buffer: keep its last limit bytes.
		t.buf = t.buf[:t.limit]
		copy(t.buf, p[n-t.limit:])
		t.start = 0
		return n, nil
	}
	if room := t.limit - len(t.buf); room > 0 {
		if n <= room {
			t.buf = append(t.buf, p...)
			return n, nil
		}
		t.buf = append(t.buf, p[:room]...)
		p = p[room:]
		// The buffer is now full and its oldest byte is at index 0, which
		// is where t.start already is.
	}
	for len(p) > 0 {
		c := copy(t.buf[t.start:], p)
		p = p[c:]
		t.start = (t.start + c) % t.limit
	}
	return n, nil
}

// Bytes returns the kept bytes, oldest first, in a new slice.
func (t *tail) Bytes() []byte {
	out := make([]byte, 0, len(t.buf))
	out = append(out, t.buf[t.start:]...)
	return append(out, t.buf[:t.start]...)
}

// Truncated reports whether more than limit bytes were written, that is
// whether output was dropped.
func (t *tail) Truncated() bool {
	return t.total > int64(t.limit)
}

// String decodes the kept bytes as UTF-8, replacing each run of invalid bytes
// with one U+FFFD. When output was dropped, the kept bytes may begin in the
// middle of a multi-byte character; those leading continuation bytes (at most
// three) are the remains of a character that was cut, not part of the output,
// so they are dropped rather than shown as a replacement character.
func (t *tail) String() string {
	b := t.Bytes()
	if t.Truncated() {
		for i := 0; i < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
