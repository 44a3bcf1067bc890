package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ServerFigures are what the model server's debug log says about the
// requests of one run: Ollama with OLLAMA_DEBUG=1 logs one line per
// completion request as its runner loads the prompt into a cache slot,
//
//	time=… level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 cache=2165 prompt=2224 used=2065 remaining=159
//
// (runner/llamarunner/cache.go and runner/ollamarunner/cache.go of Ollama
// v0.17.4): prompt is the prompt's length in tokens, used the tokens taken
// from the slot's cache and remaining the tokens the server evaluated.
type ServerFigures struct {
	Requests int `json:"requests"`
	// PromptTokens sums prompt=: the tokens sent, cached or not.
	PromptTokens int `json:"prompt_tokens_sent"`
	// EvaluatedTokens sums remaining=: the prompt tokens the server evaluated.
	EvaluatedTokens int `json:"prompt_tokens_evaluated"`
	// CachedTokens sums used=: the prompt tokens taken from the cache.
	CachedTokens int `json:"prompt_tokens_cached"`
	// Calls are the requests in the order the server took them.
	Calls []ServerCall `json:"calls,omitempty"`
}

// ServerCall is one request's line.
type ServerCall struct {
	Prompt    int `json:"prompt"`
	Used      int `json:"used"`
	Remaining int `json:"remaining"`
}

// Add adds o's figures to f.
func (f *ServerFigures) Add(o ServerFigures) {
	f.Requests += o.Requests
	f.PromptTokens += o.PromptTokens
	f.EvaluatedTokens += o.EvaluatedTokens
	f.CachedTokens += o.CachedTokens
}

// withoutCalls is f without its per-request lines (for sums).
func (f ServerFigures) withoutCalls() ServerFigures {
	f.Calls = nil
	return f
}

const cacheSlotMsg = `msg="loading cache slot"`

// ParseServerLog sums the "loading cache slot" lines of r. Other lines are
// skipped, and so is an unfinished last line (no newline yet; Ollama
// writes each line whole, so it is one still being written). A cache-slot
// line without a
// readable prompt=, used= or remaining= is an error: the log is not the
// format this parser knows.
func ParseServerLog(r io.Reader) (ServerFigures, error) {
	var f ServerFigures
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			return f, nil // line, if any, is unfinished
		}
		if err != nil {
			return f, err
		}
		if !bytes.Contains(line, []byte(cacheSlotMsg)) {
			continue
		}
		fields := logFields(string(line))
		var v [3]int
		for i, k := range []string{"prompt", "used", "remaining"} {
			x, err := strconv.Atoi(fields[k])
			if err != nil || x < 0 {
				return f, fmt.Errorf("line %d of the server log: %s=%q is not a token count: %s", n, k, fields[k], strings.TrimSpace(string(line)))
			}
			v[i] = x
		}
		f.Requests++
		f.Calls = append(f.Calls, ServerCall{Prompt: v[0], Used: v[1], Remaining: v[2]})
		f.PromptTokens += v[0]
		f.CachedTokens += v[1]
		f.EvaluatedTokens += v[2]
	}
}

// logFields splits a log/slog text line into its key=value pairs; quoted
// values keep their text without the quotes.
func logFields(line string) map[string]string {
	out := map[string]string{}
	s := strings.TrimSpace(line)
	for s != "" {
		eq := strings.IndexByte(s, '=')
		sp := strings.IndexByte(s, ' ')
		if eq < 0 {
			break
		}
		if sp >= 0 && sp < eq { // a word without '='
			s = strings.TrimLeft(s[sp:], " ")
			continue
		}
		key, rest := s[:eq], s[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			if q, err := strconv.QuotedPrefix(rest); err == nil {
				val, _ = strconv.Unquote(q)
				rest = rest[len(q):]
			} else {
				val, rest = rest, ""
			}
		} else if i := strings.IndexByte(rest, ' '); i >= 0 {
			val, rest = rest[:i], rest[i:]
		} else {
			val, rest = rest, ""
		}
		out[key] = val
		s = strings.TrimLeft(rest, " ")
	}
	return out
}

// ServerLog reads the part of a server log written since the last mark:
// the harness marks the log before each run and reads the run's lines after
// it (the runs are sequential).
type ServerLog struct {
	Path   string
	offset int64
}

// Mark remembers the log's current end.
func (l *ServerLog) Mark() error {
	st, err := os.Stat(l.Path)
	if err != nil {
		return fmt.Errorf("server log: %w", err)
	}
	l.offset = st.Size()
	return nil
}

// Since parses what was written after the mark up to the last complete
// line.
func (l *ServerLog) Since() (ServerFigures, error) {
	f, err := os.Open(l.Path)
	if err != nil {
		return ServerFigures{}, fmt.Errorf("server log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ServerFigures{}, fmt.Errorf("server log: %w", err)
	}
	if st.Size() < l.offset {
		return ServerFigures{}, fmt.Errorf("server log %s shrank during the run (%d bytes, was %d): was it rotated or the server restarted?", l.Path, st.Size(), l.offset)
	}
	if _, err := f.Seek(l.offset, io.SeekStart); err != nil {
		return ServerFigures{}, fmt.Errorf("server log: %w", err)
	}
	return ParseServerLog(io.LimitReader(f, st.Size()-l.offset))
}
