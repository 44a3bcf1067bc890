package mcp

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"flow/internal/text"
)

// TestFrameReader checks framing on its own: newline framing independent of
// read boundaries, a final line without newline, and the exact 1 MiB limit
// counting the newline.
func TestFrameReader(t *testing.T) {
	exact := strings.Repeat("x", MaxFrameBytes-1) + "\n" // 1 MiB with its newline
	over := strings.Repeat("x", MaxFrameBytes) + "\n"    // one byte more
	for _, tc := range []struct {
		name    string
		input   string
		want    []string
		wantErr error
	}{
		{"lines", "a\nb\n", []string{"a", "b"}, io.EOF},
		{"final line without newline", "a\nb", []string{"a", "b"}, io.EOF},
		{"blank lines are frames", "\n \n", []string{"", " "}, io.EOF},
		{"empty input", "", nil, io.EOF},
		{"exactly 1 MiB", exact, []string{exact[:len(exact)-1]}, io.EOF},
		{"1 MiB without newline", exact[:len(exact)-1] + "x", []string{exact[:len(exact)-1] + "x"}, io.EOF},
		{"over 1 MiB", "ok\n" + over + "next\n", []string{"ok"}, errFrameTooLarge},
		{"over 1 MiB at end of input", strings.Repeat("x", MaxFrameBytes+1), nil, errFrameTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// OneByteReader fragments every read: framing must not depend on it.
			fr := newFrameReader(iotest.OneByteReader(strings.NewReader(tc.input)), MaxFrameBytes)
			var got []string
			var err error
			for {
				var frame []byte
				frame, err = fr.next()
				if err != nil {
					break
				}
				got = append(got, string(frame))
			}
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("next() error = %v, want %v", err, tc.wantErr)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d frames, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("frame %d = %q (len %d), want len %d", i, text.Clip(got[i], 20), len(got[i]), len(tc.want[i]))
				}
			}
		})
	}
}

// TestFrameReaderStopsAtLimit: an oversized frame is not drained; the reader
// consumes at most the limit plus one buffer.
func TestFrameReaderStopsAtLimit(t *testing.T) {
	src := &countingReader{r: strings.NewReader(strings.Repeat("x", 8*MaxFrameBytes))}
	fr := newFrameReader(src, MaxFrameBytes)
	if _, err := fr.next(); !errors.Is(err, errFrameTooLarge) {
		t.Fatalf("next() error = %v, want errFrameTooLarge", err)
	}
	if limit := MaxFrameBytes + 128<<10; src.n > limit {
		t.Errorf("read %d bytes of an oversized frame, want at most %d", src.n, limit)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestParseMessage is doc/design.md §10.2 items 1-4.
func TestParseMessage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		frame  string
		want   *rpcError
		method string
		id     string
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil, "ping", "1"},
		{"string id", `{"jsonrpc":"2.0","id":"abc","method":"ping"}`, nil, "ping", `"abc"`},
		{"negative id", `{"jsonrpc":"2.0","id":-7,"method":"ping"}`, nil, "ping", "-7"},
		{"huge integer id", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, nil, "ping", "123456789012345678901234567890"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, "notifications/initialized", ""},
		{"surrounding whitespace", " \t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r", nil, "ping", "1"},
		{"not json", `not-json`, errParse, "", ""},
		{"NaN", `{"jsonrpc":"2.0","id":15,"method":"ping","params":{"x":NaN}}`, errParse, "", ""},
		{"Infinity", `{"jsonrpc":"2.0","id":15,"method":"ping","params":{"x":Infinity}}`, errParse, "", ""},
		{"two objects", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, errParse, "", ""},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}", errParse, "", ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, errBatch, "", ""},
		{"empty batch", `[]`, errBatch, "", ""},
		{"scalar", `42`, errBatch, "", ""},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, errInvalid, "", ""},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, errInvalid, "", ""},
		{"float id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, errInvalid, "", ""},
		{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, errInvalid, "", ""},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, errInvalid, "", ""},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, errInvalid, "", ""},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, errInvalid, "", ""},
		{"jsonrpc missing", `{"id":1,"method":"ping"}`, errInvalid, "", ""},
		{"jsonrpc number", `{"jsonrpc":2.0,"id":1,"method":"ping"}`, errInvalid, "", ""},
		{"method number", `{"jsonrpc":"2.0","id":1,"method":1}`, errInvalid, "", ""},
		{"a response", `{"jsonrpc":"2.0","id":1,"result":{}}`, nil, "", "1"},
		{"an error response", `{"jsonrpc":"2.0","id":"flow-1","error":{"code":-1,"message":"no"}}`, nil, "", `"flow-1"`},
		{"response with result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, errInvalid, "", ""},
		{"response with neither", `{"jsonrpc":"2.0","id":1}`, errInvalid, "", ""},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, errInvalid, "", ""},
		{"response with a null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, errInvalid, "", ""},
		{"error response, error not an object", `{"jsonrpc":"2.0","id":1,"error":"no"}`, errInvalid, "", ""},
		{"case-sensitive member names", `{"JSONRPC":"2.0","id":1,"method":"ping"}`, errInvalid, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := parseMessage([]byte(tc.frame))
			if err != tc.want {
				t.Fatalf("parseMessage(%q) error = %v, want %v", tc.frame, err, tc.want)
			}
			if err != nil {
				return
			}
			if m.method != tc.method || string(m.id) != tc.id {
				t.Errorf("parseMessage(%q) = method %q id %s, want %q %s", tc.frame, m.method, m.id, tc.method, tc.id)
			}
		})
	}
}

func TestIDKey(t *testing.T) {
	same := [][2]string{{`"a"`, `"\u0061"`}, {`0`, `-0`}, {`12`, `12`}}
	for _, p := range same {
		if idKey([]byte(p[0])) != idKey([]byte(p[1])) {
			t.Errorf("idKey(%s) != idKey(%s), want equal", p[0], p[1])
		}
	}
	if idKey([]byte(`"1"`)) == idKey([]byte(`1`)) {
		t.Errorf(`idKey("1") == idKey(1), want different`)
	}
}

// TestWireFraming drives Serve: a request split across writes gets one
// reply, blank lines are skipped, parse errors do not end the session, and
// a last line without newline is answered at EOF (as the reference program's framing contract tests ask).
func TestWireFraming(t *testing.T) {
	c := startServer(t, &fakeRuntime{})
	req := `{"jsonrpc":"2.0","id":"frag","method":"ping"}` + "\n"
	for _, part := range []string{req[:7], req[7:30], req[30:]} {
		if _, err := io.WriteString(c.in, part); err != nil {
			t.Fatal(err)
		}
	}
	c.expect(`{"jsonrpc":"2.0","id":"frag","result":{}}`)
	c.send("")
	c.send("   \t\r")
	c.send(`not-json`)
	c.expect(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
	c.send(`[]`)
	c.expect(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: expected one JSON-RPC object, not a batch"}}`)
	c.send(`{"jsonrpc":"2.0","id":true,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid JSON-RPC request"}}`)
	c.send(`{"jsonrpc":"2.0","id":null,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid JSON-RPC request"}}`)
	c.send(`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`)
	if got := strings.TrimSpace(string(c.recv())); got != `{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}}` {
		t.Errorf("large id reply = %s, want the id echoed byte for byte", got)
	}
	c.send(`{"jsonrpc":"2.0","id":"alive","method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":"alive","result":{}}`)
	if _, err := io.WriteString(c.in, `{"jsonrpc":"2.0","id":"last","method":"ping"}`); err != nil {
		t.Fatal(err)
	}
	if err := c.closeInput(); err != nil {
		t.Fatalf("Serve = %v, want nil at EOF", err)
	}
	if diff := jsonDiff(`[{"jsonrpc":"2.0","id":"last","result":{}}]`, "["+strings.Join(c.rest(), ",")+"]"); diff != "" {
		t.Errorf("replies after a last line without newline (-want +got):\n%s", diff)
	}
}

// TestOversizedFrameClosesSession ports the reference program's oversized-frame contract test: ping, blank line, a frame of 1 MiB + 1 byte, ping → the first ping's
// reply, one -32700, nothing for the last ping, and Serve returns nil
// without waiting for the rest of the input.
func TestOversizedFrameClosesSession(t *testing.T) {
	c := startServer(t, &fakeRuntime{})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	c.send("")
	go func() {
		// The server stops reading: this write never completes; cleanup
		// closes the pipe.
		_, _ = io.WriteString(c.in, strings.Repeat(" ", MaxFrameBytes)+"\n"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	}()
	if err := c.wait(); err != nil {
		t.Fatalf("Serve = %v, want nil after an oversized frame", err)
	}
	got := c.rest()
	want := []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Frame exceeds 1 MiB; connection closing"}}`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if diff := jsonDiff(want[i], got[i]); diff != "" {
			t.Errorf("line %d (-want +got):\n%s", i, diff)
		}
	}
}

// TestFrameAtLimitIsServed: a request of exactly 1 MiB with its newline is
// answered normally.
func TestFrameAtLimitIsServed(t *testing.T) {
	c := startServer(t, &fakeRuntime{})
	head := `{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"`
	tail := `"}}`
	pad := strings.Repeat("p", MaxFrameBytes-1-len(head)-len(tail))
	frame := head + pad + tail
	if len(frame)+1 != MaxFrameBytes {
		t.Fatalf("test frame is %d bytes with its newline, want %d", len(frame)+1, MaxFrameBytes)
	}
	c.send(frame)
	c.expect(`{"jsonrpc":"2.0","id":"big","result":{}}`)
}

// TestEOFWithoutInput: an empty session ends with nil and writes nothing.
func TestEOFWithoutInput(t *testing.T) {
	srv := NewServer(&fakeRuntime{}, Options{})
	var out bytes.Buffer
	if err := srv.Serve(t.Context(), strings.NewReader(""), &out); err != nil {
		t.Fatalf("Serve(empty input) = %v, want nil", err)
	}
	if out.Len() != 0 {
		t.Errorf("Serve(empty input) wrote %q, want nothing", out.String())
	}
}

// TestReadErrorIsReturned: an input error other than EOF ends the session
// with that error.
func TestReadErrorIsReturned(t *testing.T) {
	boom := errors.New("boom")
	srv := NewServer(&fakeRuntime{}, Options{})
	err := srv.Serve(t.Context(), iotest.ErrReader(boom), io.Discard)
	if !errors.Is(err, boom) {
		t.Fatalf("Serve(failing input) = %v, want it to wrap %v", err, boom)
	}
}

// TestWriteErrorEndsSession: when the output fails the session ends quietly.
func TestWriteErrorEndsSession(t *testing.T) {
	srv := NewServer(&fakeRuntime{}, Options{})
	inR, inW := io.Pipe()
	defer inW.Close()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(t.Context(), inR, failingWriter{}) }()
	go func() { _, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n") }()
	if err := <-done; err != nil {
		t.Fatalf("Serve(failing output) = %v, want nil", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }
