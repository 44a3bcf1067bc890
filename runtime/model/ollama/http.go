package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"

	"flow/internal/text"
)

// do sends one request and returns the response when its status is 2xx.
// The response body is capped at maxResponseBytes. A 3xx or another non-2xx
// status is returned as an error, with the body read and closed.
func (c *Client) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	op := method + " " + path
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("ollama: %s: encode request: %w", op, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("ollama: %s: %w", op, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				// The most common first-run problem: say what to do.
				return nil, fmt.Errorf("ollama: %w (is the server running? start it with `ollama serve`, or set ollama.base_url)", err)
			}
			return nil, fmt.Errorf("ollama: %w", err) // *url.Error names method and URL
		}
		return nil, callError(ctx, op, err)
	}
	resp.Body = &cappedBody{r: resp.Body, c: resp.Body, left: maxResponseBytes}
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if loc == "" {
			loc = "(no Location)"
		}
		return nil, fmt.Errorf("ollama: unexpected HTTP %d redirect from %s to %s; redirects are not followed", resp.StatusCode, op, loc)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		defer resp.Body.Close()
		b, rerr := io.ReadAll(resp.Body)
		if rerr != nil && ctx.Err() != nil {
			return nil, callError(ctx, op, rerr)
		}
		msg := errorText(b)
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		return nil, &statusError{op: op, code: resp.StatusCode, message: msg}
	}
	return resp, nil
}

// callJSON sends a request and decodes the JSON response into out, all within
// the per-call timeout.
func (c *Client) callJSON(ctx context.Context, method, path string, body, out any) error {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	resp, err := c.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return callError(ctx, method+" "+path, err)
	}
	if msg := errorField(b); msg != "" {
		return fmt.Errorf("ollama: %s", msg)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("ollama: %s: decode response: %w", method+" "+path, err)
	}
	return nil
}

// cappedBody reads at most left bytes of r and fails with errTooLarge if r
// has more.
type cappedBody struct {
	r    io.Reader
	c    io.Closer
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var probe [1]byte
		n, err := b.r.Read(probe[:])
		if n > 0 {
			return 0, errTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.c.Close() }

// errorText extracts the server's message from an error body: Ollama's
// {"error":"..."}, OpenAI's {"error":{"message":"..."}}, or else the body
// itself, shortened.
func errorText(body []byte) string {
	if msg := errorField(body); msg != "" {
		return msg
	}
	return text.Clip(strings.TrimSpace(string(body)), 300)
}

// errorField returns the message of a JSON object's "error" member, or ""
// when body is not an object or has no non-empty error.
func errorField(body []byte) string {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	return rawErrorText(v.Error)
}

// rawErrorText turns the value of an "error" member into a message.
func rawErrorText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return "unknown error"
		}
		return s
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Message != "" {
		return o.Message
	}
	return text.Clip(string(raw), 300)
}
