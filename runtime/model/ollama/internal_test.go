package ollama

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestCappedBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		size    int
		wantErr bool
	}{
		{0, false},
		{maxResponseBytes - 1, false},
		{maxResponseBytes, false},
		{maxResponseBytes + 1, true},
		{3 * maxResponseBytes, true},
	}
	for _, tc := range tests {
		r := strings.NewReader(strings.Repeat("x", tc.size))
		b, err := io.ReadAll(&cappedBody{r: r, c: io.NopCloser(r), left: maxResponseBytes})
		if tc.wantErr {
			if !errors.Is(err, errTooLarge) || len(b) > maxResponseBytes {
				t.Errorf("read %d bytes: got %d bytes, %v, want errTooLarge after at most %d bytes", tc.size, len(b), err, maxResponseBytes)
			}
			continue
		}
		if err != nil || len(b) != tc.size {
			t.Errorf("read %d bytes: got %d bytes, %v, want all of them", tc.size, len(b), err)
		}
	}
}

func TestDialRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	// The dial check stops a loopback-only client even when a name that
	// passed validation resolves elsewhere; dial an address directly.
	_, err := newHTTPClient(false).Get("http://192.0.2.1:9/api/version")
	if err == nil || !strings.Contains(err.Error(), "refusing to connect to non-loopback address 192.0.2.1:9") {
		t.Errorf("Get(192.0.2.1) = %v, want the non-loopback refusal", err)
	}
}

func TestArgumentsRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, wire, back string }{
		{`{"a": 1}`, `{"a": 1}`, `{"a":1}`},
		{`{"a": `, `"{\"a\": "`, `{"a": `},
		{`[1]`, `"[1]"`, `[1]`},
		{`"s"`, `"\"s\""`, `"s"`},
		{``, `{}`, `{}`},
		{`  `, `{}`, `{}`},
	}
	for _, tc := range tests {
		wire := argumentsValue(tc.text)
		if string(wire) != tc.wire {
			t.Errorf("argumentsValue(%q) = %s, want %s", tc.text, wire, tc.wire)
		}
		if back := argumentsText(wire); back != tc.back {
			t.Errorf("argumentsText(%s) = %q, want %q", wire, back, tc.back)
		}
	}
}
