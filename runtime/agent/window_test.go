package agent

import (
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/config"
	"flow/runtime/report"
)

func TestContextOverflowStoppedBeforeTheServerTruncates(t *testing.T) {
	// A 4096-token window and a 20000-character file: the prompt after the
	// read is well over the window, so flow must not send it.
	big := strings.Repeat("// a line of Go comment text\n", 700)
	cfg := testConfig(workspace(t, map[string]string{"big.go": big}))
	cfg.Trusted = false
	cfg.Ollama.ContextLength = 4096
	rep, srv, _ := fakeRun(t, cfg, "read big.go",
		ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "r1", Name: "file_read", Arguments: `{"path":"big.go"}`}}, PromptTokens: 1400},
		ollamatest.Turn{Content: "never sent"},
	)
	pl := rep.Roles[0]
	if pl.Status != report.StatusError || !strings.HasPrefix(pl.Error, MsgContextOverflow) {
		t.Fatalf("planner = %s %q, want error %q...", pl.Status, pl.Error, MsgContextOverflow)
	}
	for _, want := range []string{"4096", "context_length"} {
		if !strings.Contains(pl.Error, want) {
			t.Errorf("error %q does not name %q", pl.Error, want)
		}
	}
	if n := len(chatRequests(srv)); n != 1 || srv.Pending() != 1 {
		t.Errorf("%d chat requests, %d turns left; want 1 and 1: the oversized prompt is never sent", n, srv.Pending())
	}
	if rep.Status != report.StatusError || !strings.HasPrefix(rep.Error, "The planner's prompt no longer fits the model's context window (the next prompt is about") {
		t.Errorf("Run() = %s %q, want the context_overflow error", rep.Status, rep.Error)
	}
}

func TestContextOverflowReportedByTheServer(t *testing.T) {
	read := ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "r1", Name: "file_read", Arguments: `{"path":"a.go"}`}}}
	tests := []struct {
		name   string
		api    string
		turns  []ollamatest.Turn
		calls  int
		want   []string
		reject []string
	}{
		{
			// Ollama's OpenAI endpoint ignores context_length and runs at
			// its own default: the prompt stops growing at 4096.
			name: "openai, a window smaller than the prompt",
			api:  config.APIOpenAI,
			turns: []ollamatest.Turn{
				withTokens(read, 4096),
				withTokens(ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "r2", Name: "file_list"}}}, 4096),
			},
			calls: 2,
			want:  []string{"4096", "OLLAMA_CONTEXT_LENGTH", "context_length"},
		},
		{
			name:   "native, prompt_tokens at the window",
			api:    config.APINative,
			turns:  []ollamatest.Turn{withTokens(read, 16384)},
			calls:  1,
			want:   []string{"16384", "raise ollama.context_length"},
			reject: []string{"OLLAMA_CONTEXT_LENGTH"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(workspace(t, map[string]string{"a.go": strings.Repeat("package a // padding\n", 40)}))
			cfg.Trusted = false
			cfg.Ollama.API = tc.api
			rep, srv, _ := fakeRun(t, cfg, "read a.go", tc.turns...)
			pl := rep.Roles[0]
			if pl.Status != report.StatusError || !strings.HasPrefix(pl.Error, MsgContextOverflow) {
				t.Fatalf("planner = %s %q, want error %q...", pl.Status, pl.Error, MsgContextOverflow)
			}
			for _, w := range tc.want {
				if !strings.Contains(pl.Error, w) {
					t.Errorf("error %q does not name %q", pl.Error, w)
				}
			}
			for _, w := range tc.reject {
				if strings.Contains(pl.Error, w) {
					t.Errorf("error %q names %q, which does not apply", pl.Error, w)
				}
			}
			if n := len(chatRequests(srv)); n != tc.calls {
				t.Errorf("%d chat requests, want %d", n, tc.calls)
			}
			calls := modelCalls(rep)
			if last := calls[len(calls)-1]; last.Status != report.StatusError || last.Error != pl.Error {
				t.Errorf("last model-call event = %+v, want the error", last)
			}
		})
	}
}

func withTokens(t ollamatest.Turn, prompt int) ollamatest.Turn {
	t.PromptTokens = prompt
	return t
}

func TestWindowRefinesItsEstimate(t *testing.T) {
	w := newWindow(config.Ollama{ContextLength: 8192, API: config.APINative})
	budget := w.budget()
	if budget != 8192-1024 {
		t.Fatalf("budget() = %d, want 8192 less 1024 for the reply", budget)
	}
	chars := int(float64(budget) * defaultCharsPerToken)
	if msg := w.before(chars); msg != "" {
		t.Errorf("before(%d) = %q, want it to fit by the default estimate", chars, msg)
	}
	// The server says 2 characters a token: the same prompt no longer fits.
	if msg := w.after(1000, 500, promptSize{}); msg != "" {
		t.Fatalf("after() = %q, want no overflow", msg)
	}
	if msg := w.before(chars); !strings.Contains(msg, "server's counts") {
		t.Errorf("before(%d) after measuring = %q, want an overflow estimated from the server's counts", chars, msg)
	}
	// A shrinking count while the conversation grew is a truncation.
	if msg := w.after(5000, 900, promptSize{chars: 4000, tokens: 1000}); !strings.HasPrefix(msg, MsgContextOverflow) {
		t.Errorf("after(shrinking) = %q, want context_overflow", msg)
	}
	// Far below what the previous call's ratio predicts is one too.
	if msg := w.after(40000, 1500, promptSize{chars: 4000, tokens: 1000}); !strings.HasPrefix(msg, MsgContextOverflow) {
		t.Errorf("after(far below) = %q, want context_overflow", msg)
	}
	// Far fewer than last time is a server counting only uncached tokens:
	// no conclusion, and no change to the estimate.
	cpt := w.cpt
	if msg := w.after(5000, 100, promptSize{chars: 4000, tokens: 1000}); msg != "" || w.cpt != cpt {
		t.Errorf("after(uncached count) = %q, ratio %v -> %v; want no overflow and the estimate kept", msg, cpt, w.cpt)
	}
	if msg := w.after(4100, 1030, promptSize{chars: 4000, tokens: 1000}); msg != "" {
		t.Errorf("after(normal growth) = %q, want none", msg)
	}
	off := newWindow(config.Ollama{})
	if off.before(1<<30) != "" || off.after(1<<30, 1, promptSize{}) != "" {
		t.Error("a window of 0 tokens must disable the checks")
	}
}
