package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// FuzzFrames feeds arbitrary bytes to the frame reader and every frame to
// the envelope parser, with a small frame limit so oversized frames are
// exercised. The reader must split exactly at newlines without losing or
// inventing bytes, never return a frame over the limit, stop at an oversized
// one; the parser must accept only JSON-RPC 2.0 objects with a string method
// and a valid id, and classify everything else as one of its errors.
func FuzzFrames(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":"a","method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n",
		`{"jsonrpc":"2.0","id":{},"method":"x"}` + "\n",
		`{"jsonrpc":"1.0","id":1,"method":"x"}` + "\n\n  \n",
		"\xff\xfe{}\n",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"` + string(bytes.Repeat([]byte("x"), 300)) + `"}}}` + "\n",
		"no newline at the end",
		`{"jsonrpc":"2.0","id":1e400,"method":"x"}` + "\n",
		`{"jsonrpc":"2.0","id":null,"method":"x","method":"y"}` + "\n",
	} {
		f.Add([]byte(s))
	}
	const limit = 256
	f.Fuzz(func(t *testing.T, in []byte) {
		fr := newFrameReader(bytes.NewReader(in), limit)
		var got [][]byte
		oversized := false
		for {
			frame, err := fr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if errors.Is(err, errFrameTooLarge) {
				oversized = true
				break
			}
			if err != nil {
				t.Fatalf("next: unexpected error %v", err)
			}
			if len(frame) > limit {
				t.Fatalf("frame of %d bytes passed a %d-byte limit", len(frame), limit)
			}
			if bytes.IndexByte(frame, '\n') >= 0 {
				t.Fatalf("frame %q holds a newline", frame)
			}
			got = append(got, bytes.Clone(frame))
			checkEnvelope(t, frame)
		}
		if !oversized {
			// Without an oversized line, the frames are exactly the input's
			// lines (a last line without a newline included).
			want := bytes.Split(bytes.TrimSuffix(in, []byte("\n")), []byte("\n"))
			if len(in) == 0 {
				want = nil
			}
			if len(got) != len(want) {
				t.Fatalf("%d frames from %d lines", len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("frame %d = %q, want %q", i, got[i], want[i])
				}
			}
		}
	})
}

func checkEnvelope(t *testing.T, frame []byte) {
	t.Helper()
	m, rerr := parseMessage(frame)
	if rerr != nil {
		switch rerr {
		case errParse, errBatch, errInvalid:
		default:
			t.Fatalf("parseMessage(%q) = unknown error %v", frame, rerr)
		}
		return
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(frame, &fields); err != nil {
		t.Fatalf("accepted %q, which is not a JSON object: %v", frame, err)
	}
	if m.method == "" && string(fields["method"]) != `""` && !m.response {
		t.Fatalf("accepted %q without a method", frame)
	}
	if m.response && (m.id == nil || fields["method"] != nil || (m.result == nil) == (m.err == nil)) {
		t.Fatalf("accepted %q as a response", frame)
	}
	if m.id != nil && !validID(m.id) {
		t.Fatalf("accepted the invalid id %s", m.id)
	}
}
