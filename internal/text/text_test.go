package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestOneLine(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"fix the\n\tbug  now", 80, "fix the bug now"},
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abcde…"},
		{"ééééé", 4, "ééé…"},
		{"  ", 5, ""},
		{"abc", 0, ""},
		{"abc", 1, "a"[:0] + "…"},
	}
	for _, c := range cases {
		if got := OneLine(c.in, c.n); got != c.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestTruncateAndTail(t *testing.T) {
	cases := []struct {
		in          string
		n           int
		first, last string
	}{
		{"hello", 3, "hel", "llo"},
		{"hello", 5, "hello", "hello"},
		{"hello", 9, "hello", "hello"},
		{"héllo", 2, "hé", "lo"},
		{"日本語テキスト", 3, "日本語", "キスト"},
		{"😀😀😀", 1, "😀", "😀"},
		{"abc", 0, "", ""},
		{"abc", -1, "", ""},
		// Each invalid byte is one character, as a range loop sees it.
		{"a\xe6\x97b", 2, "a\xe6", "\x97b"},
		{"\xc3\xa9\xa9x", 2, "é\xa9", "\xa9x"},
	}
	for _, c := range cases {
		if got := Truncate(c.in, c.n); got != c.first {
			t.Errorf("Truncate(%q, %d) = %q, want %q", c.in, c.n, got, c.first)
		}
		if got := Tail(c.in, c.n); got != c.last {
			t.Errorf("Tail(%q, %d) = %q, want %q", c.in, c.n, got, c.last)
		}
	}
	long := strings.Repeat("é", 1000)
	if got := Truncate(long, 999); got != long[:len(long)-2] {
		t.Errorf("Truncate cut %d bytes, want the last character only", len(long)-len(got))
	}
}

func TestClip(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"a\nb  c", 9, "a\nb  c"}, // Clip keeps whitespace as it is
		{"日本語テキスト", 4, "日本語…"},
		{"abc", 0, ""},
	}
	for _, c := range cases {
		if got := Clip(c.in, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestClipBytes(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abc…"},
		{"aéé", 5, "aéé"},     // five bytes fit
		{"aéébc", 6, "aé…"},   // "aé" and the mark are six bytes
		{"aéééb", 7, "aé…"},   // a second "é" and the mark would be eight bytes
		{"ééééé", 8, "éé…"},   // never half a character
		{"日本語テキスト", 9, "日本…"}, // three-byte characters
		{"abcdef", 3, "…"},
		{"abcdef", 2, ""},
		{"", 0, ""},
	}
	for _, c := range cases {
		got := ClipBytes(c.in, c.n)
		if got != c.want {
			t.Errorf("ClipBytes(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
		if len(got) > max(c.n, 0) || !utf8.ValidString(got) {
			t.Errorf("ClipBytes(%q, %d) = %q: %d bytes or invalid UTF-8", c.in, c.n, got, len(got))
		}
	}
}

func TestFirstLine(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"fix the bug", 80, "fix the bug"},
		{"  fix the bug \n", 80, "fix the bug"},
		{"fix the bug\nin parse.go", 80, "fix the bug …"},
		{"fix the bug \r\nin parse.go", 80, "fix the bug …"},
		{"\n\nfix\tthe bug", 80, "fix\tthe bug"},
		{"fix the bug", 8, "fix the…"},
		{"fix the bug\nin parse.go", 12, "fix the bug…"},
		{"fix the bug\nin parse.go", 13, "fix the bug …"},
		{"ééééé", 4, "ééé…"},
		{"", 5, ""},
		{"abc", 0, ""},
	}
	for _, c := range cases {
		if got := FirstLine(c.in, c.n); got != c.want {
			t.Errorf("FirstLine(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestLastLines(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
		left int
	}{
		{"a\nb\nc\n", 2, "b\nc", 1},
		{"a\nb\nc", 3, "a\nb\nc", 0},
		{"a\nb\nc\n\n", 5, "a\nb\nc", 0},
		{"a\n\nc", 2, "\nc", 1}, // blank lines count
		{"", 3, "", 0},
		{"\n\n", 3, "", 0},
		{"a\nb", 0, "", 2},
	}
	for _, c := range cases {
		got, left := LastLines(c.in, c.n)
		if got != c.want || left != c.left {
			t.Errorf("LastLines(%q, %d) = %q, %d; want %q, %d", c.in, c.n, got, left, c.want, c.left)
		}
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 tool calls", 1: "1 tool call", 2: "2 tool calls"} {
		if got := Count(n, "tool call"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
