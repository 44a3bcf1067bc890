package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Lines of real Ollama v0.17.4 debug logs (OLLAMA_DEBUG=1): the 1.5B
// model's server on this machine and the test suite's server with a
// stand-in model, both on the llama runner.
const (
	realSlotFirst = `time=2026-12-03T07:52:21.353Z level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 cache=0 prompt=2066 used=0 remaining=2066`
	realSlotReuse = `time=2026-12-03T07:54:46.620Z level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 cache=2165 prompt=2224 used=2065 remaining=159`
	realSlotSmall = `time=2026-12-03T07:54:47.749Z level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 cache=94 prompt=105 used=83 remaining=22`
	realCompl     = `time=2026-12-03T07:54:47.744Z level=DEBUG source=server.go:1536 msg="completion request" images=0 prompt=229 format=""`
	realGin       = `[GIN] 2026/12/03 - 07:54:47 | 200 |  255.392768ms |       127.0.0.1 | POST     "/api/chat"`
	realSched     = `time=2026-12-03T07:54:47.985Z level=DEBUG source=sched.go:338 msg="runner with non-zero duration has gone idle, adding timer" runner.name=registry.ollama.ai/library/flowtest-text:latest runner.size="227.3 KiB" runner.vram="0 B" runner.parallel=1`
	// The new engine's runner logs the same message from its own cache.go.
	engineSlot = `time=2026-12-03T09:00:00.000Z level=DEBUG source=cache.go:151 msg="loading cache slot" id=1 cache=10 prompt=300 used=10 remaining=290`
)

func TestParseServerLog(t *testing.T) {
	cases := []struct {
		name string
		log  string
		want ServerFigures
		err  string
	}{
		{"empty", "", ServerFigures{}, ""},
		{"no request", realSched + "\n" + realGin + "\n", ServerFigures{}, ""},
		{"one request", realCompl + "\n" + realSlotFirst + "\n" + realGin + "\n",
			ServerFigures{Requests: 1, PromptTokens: 2066, EvaluatedTokens: 2066}, ""},
		{"a cached prefix", realSlotFirst + "\n" + realSched + "\n" + realSlotReuse + "\n",
			ServerFigures{Requests: 2, PromptTokens: 2066 + 2224, EvaluatedTokens: 2066 + 159, CachedTokens: 2065}, ""},
		{"both runners", realSlotSmall + "\n" + engineSlot + "\n",
			ServerFigures{Requests: 2, PromptTokens: 405, EvaluatedTokens: 312, CachedTokens: 93}, ""},
		{"unfinished last line", realSlotSmall + "\n" + realSlotReuse[:90],
			ServerFigures{Requests: 1, PromptTokens: 105, EvaluatedTokens: 22, CachedTokens: 83}, ""},
		{"CRLF", realSlotSmall + "\r\n", ServerFigures{Requests: 1, PromptTokens: 105, EvaluatedTokens: 22, CachedTokens: 83}, ""},
		{"a field missing", strings.Replace(realSlotSmall, " used=83", "", 1) + "\n", ServerFigures{}, "used="},
		{"not a number", strings.Replace(realSlotSmall, "prompt=105", "prompt=many", 1) + "\n", ServerFigures{}, `prompt="many"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseServerLog(strings.NewReader(c.log))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("ParseServerLog = %+v, %v; want an error containing %q", got, err, c.err)
				}
				return
			}
			if err != nil || !sameFigures(got, c.want) {
				t.Errorf("ParseServerLog = %+v, %v; want %+v", got, err, c.want)
			}
			// One line per request, in order, with the sums' parts.
			var sum ServerFigures
			for _, call := range got.Calls {
				sum.Add(ServerFigures{Requests: 1, PromptTokens: call.Prompt, CachedTokens: call.Used, EvaluatedTokens: call.Remaining})
			}
			if !sameFigures(sum, got) {
				t.Errorf("calls %+v do not add up to %+v", got.Calls, got.withoutCalls())
			}
		})
	}
}

func TestLogFields(t *testing.T) {
	got := logFields(realSched)
	want := map[string]string{"msg": "runner with non-zero duration has gone idle, adding timer", "runner.size": "227.3 KiB",
		"runner.vram": "0 B", "runner.parallel": "1", "level": "DEBUG"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("logFields(…)[%q] = %q, want %q", k, got[k], v)
		}
	}
	if got := logFields(`[GIN] 2026/12/03 - 07:54:47 | 200 | x=1`); got["x"] != "1" || len(got) != 1 {
		t.Errorf("logFields of a GIN line = %v, want only x=1", got)
	}
}

// TestServerLogMarks: each run gets the lines written after its mark, and a
// log that shrank is an error rather than a wrong figure.
func TestServerLogMarks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(path, []byte(realSlotFirst+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := &ServerLog{Path: path}
	if err := l.Mark(); err != nil {
		t.Fatal(err)
	}
	appendLine := func(s string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s + "\n")
		f.Close()
	}
	appendLine(realSlotReuse)
	appendLine(realGin)
	got, err := l.Since()
	if want := (ServerFigures{Requests: 1, PromptTokens: 2224, EvaluatedTokens: 159, CachedTokens: 2065}); err != nil || !sameFigures(got, want) {
		t.Errorf("Since = %+v, %v; want only the line after the mark, %+v", got, err, want)
	}
	if err := l.Mark(); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Since(); err != nil || !sameFigures(got, ServerFigures{}) {
		t.Errorf("Since with nothing new = %+v, %v; want zero", got, err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Since(); err == nil || !strings.Contains(err.Error(), "shrank") {
		t.Errorf("Since after truncation = %v, want an error saying the log shrank", err)
	}
	if err := (&ServerLog{Path: filepath.Join(t.TempDir(), "none")}).Mark(); err == nil {
		t.Error("Mark of a missing log succeeded")
	}
}

// sameFigures compares two servers' sums, not their per-request lines.
func sameFigures(a, b ServerFigures) bool {
	return reflect.DeepEqual(a.withoutCalls(), b.withoutCalls())
}
