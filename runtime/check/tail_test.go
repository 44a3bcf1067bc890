package check

import (
	"bytes"
	"fmt"
	"testing"
)

func TestTailKeepsLastBytes(t *testing.T) {
	t.Parallel()
	// Every limit against every total length and write size, compared with
	// the plain suffix of the whole stream.
	for _, limit := range []int{0, 1, 5, 10} {
		for _, chunk := range []int{1, 3, 7, 10, 11, 25} {
			for total := 0; total <= 40; total++ {
				data := make([]byte, total)
				for i := range data {
					data[i] = byte('a' + i%26)
				}
				tl := newTail(limit)
				for rest := data; len(rest) > 0; {
					n := min(chunk, len(rest))
					if w, err := tl.Write(rest[:n]); w != n || err != nil {
						t.Fatalf("Write(%d bytes) = %d, %v, want %d, nil", n, w, err, n)
					}
					rest = rest[n:]
				}
				want := data[max(0, total-limit):]
				name := fmt.Sprintf("limit=%d chunk=%d total=%d", limit, chunk, total)
				if got := tl.Bytes(); !bytes.Equal(got, want) {
					t.Errorf("%s: Bytes() = %q, want %q", name, got, want)
				}
				if got, want := tl.Truncated(), total > limit; got != want {
					t.Errorf("%s: Truncated() = %v, want %v", name, got, want)
				}
			}
		}
	}
}

func TestTailNegativeLimitKeepsNothing(t *testing.T) {
	t.Parallel()
	tl := newTail(-3)
	tl.Write([]byte("abc"))
	if got := tl.Bytes(); len(got) != 0 {
		t.Errorf("Bytes() = %q, want empty", got)
	}
	if !tl.Truncated() {
		t.Errorf("Truncated() = false, want true")
	}
}

func TestTailString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		limit int
		in    string
		want  string
	}{
		{"ascii", 10, "hello", "hello"},
		{"valid multibyte kept", 10, "aé€", "aé€"},
		{"invalid byte replaced", 10, "a\xffb", "a\uFFFDb"},
		{"invalid run is one replacement", 10, "a\xff\xfe\xfdb", "a\uFFFDb"},
		// "x€€" is 7 bytes; the last 5 start inside the first "€".
		{"cut character dropped", 5, "x€€", "€"},
		// Exactly at the limit nothing was cut: a leading continuation
		// byte is the stream's own garbage and is shown.
		{"untruncated leading continuation shown", 4, "\x82abc", "\uFFFDabc"},
		// More than three continuation bytes cannot all be one cut
		// character: the excess becomes one replacement.
		{"long garbage one replacement", 5, "zz\x80\x80\x80\x80a", "\uFFFDa"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTail(tc.limit)
			tl.Write([]byte(tc.in))
			if got := tl.String(); got != tc.want {
				t.Errorf("String() after Write(%q) with limit %d = %q, want %q", tc.in, tc.limit, got, tc.want)
			}
		})
	}
}
