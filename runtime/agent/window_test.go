package agent

import (
	"context"
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/config"
	"flow/runtime/model"
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
			calls: 1, // the window is known before the first call: its count of 4096 fills it
			want:  []string{"4096", "(GET /api/ps)", "OLLAMA_CONTEXT_LENGTH", "context_length"},
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

// TestServerWindowBeforeTheFirstCall: on the OpenAI-compatible API the
// server, not context_length, decides the window. flow asks the server
// before the first call (Ollama: load with its defaults, then /api/ps), so
// a first prompt larger than a 1024-token server window is never sent,
// where it used to be truncated silently and noticed only on the second
// call. The native API sends context_length and asks nothing.
func TestServerWindowBeforeTheFirstCall(t *testing.T) {
	big := strings.Repeat("// a line of Go comment text\n", 400) // about 3300 tokens
	for _, api := range []string{config.APIOpenAI, config.APINative} {
		t.Run(api, func(t *testing.T) {
			cfg := testConfig(workspace(t, map[string]string{"big.go": big}))
			cfg.Trusted = false
			cfg.Ollama.API = api
			srv := ollamatest.New(t, ollamatest.Turn{Content: "Plan: nothing.", PromptTokens: 3500})
			srv.SetLoadContext(1024)
			h := newHarness(t, cfg, ollamaBackend(t, srv, cfg))
			rep := h.run(t, "read big.go")
			var loads int
			for _, r := range srv.Requests() {
				if r.Path == "/api/generate" {
					loads++
				}
			}
			pl := rep.Roles[0]
			if api == config.APINative {
				if loads != 0 || len(chatRequests(srv)) != 1 || pl.Status == report.StatusError {
					t.Errorf("native: %d loads, %d chat requests, planner %s %q; want no probe and the call made", loads, len(chatRequests(srv)), pl.Status, pl.Error)
				}
				return
			}
			if loads != 1 || len(chatRequests(srv)) != 0 {
				t.Errorf("%d loads, %d chat requests; want one load and the prompt never sent: %s", loads, len(chatRequests(srv)), pl.Error)
			}
			if pl.Status != report.StatusError || !strings.HasPrefix(pl.Error, MsgContextOverflow) {
				t.Fatalf("planner = %s %q, want error %q...", pl.Status, pl.Error, MsgContextOverflow)
			}
			for _, want := range []string{"1024 tokens the server runs the model with (GET /api/ps)", "OLLAMA_CONTEXT_LENGTH"} {
				if !strings.Contains(pl.Error, want) {
					t.Errorf("error %q does not name %q", pl.Error, want)
				}
			}
		})
	}
}

// prober is a backend that tells a fixed server window.
type prober struct {
	model.Backend
	tokens int
	source string
	asked  int
}

func (p *prober) ServerWindow(context.Context, string) (int, string) {
	p.asked++
	return p.tokens, p.source
}

func TestProbeWindow(t *testing.T) {
	tests := []struct {
		name       string
		api        string
		configured int
		server     int
		want       int
		wantSource string
		asked      int
	}{
		{"openai, a smaller server window", config.APIOpenAI, 16384, 4096, 4096, "GET /props", 1},
		{"openai, a larger server window keeps context_length", config.APIOpenAI, 8192, 32768, 8192, "", 1},
		{"openai, a server that does not say", config.APIOpenAI, 8192, 0, 8192, "", 1},
		{"openai, no context_length", config.APIOpenAI, 0, 4096, 4096, "GET /props", 1},
		{"native, never asked", config.APINative, 16384, 4096, 16384, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &prober{tokens: tc.server, source: "GET /props"}
			w := probeWindow(t.Context(), config.Ollama{API: tc.api, ContextLength: tc.configured}, b, "m")
			if w.tokens != tc.want || w.server != tc.wantSource || b.asked != tc.asked {
				t.Errorf("probeWindow = %d from %q, asked %d times; want %d from %q, asked %d", w.tokens, w.server, b.asked, tc.want, tc.wantSource, tc.asked)
			}
		})
	}
	// A backend that cannot tell keeps context_length.
	w := probeWindow(t.Context(), config.Ollama{API: config.APIOpenAI, ContextLength: 8192}, struct{ model.Backend }{}, "m")
	if w.tokens != 8192 || w.server != "" {
		t.Errorf("probeWindow without a prober = %d %q, want 8192", w.tokens, w.server)
	}
}
