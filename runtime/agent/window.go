package agent

import (
	"context"
	"fmt"

	"flow/runtime/config"
	"flow/runtime/model"
)

// The prompt budget derived from the model's context window (doc/design.md §6 as
// amended): flow estimates a prompt's tokens from its characters and stops
// before a call the server would have to truncate, and it checks the
// server's prompt_tokens after each call for signs that it truncated anyway.
const (
	// defaultCharsPerToken is the estimate before the server has reported
	// any prompt_tokens: conservative for code and JSON, which tokenise at
	// roughly 3.5 to 4 characters a token.
	defaultCharsPerToken = 3.5
	// minCharsPerToken and maxCharsPerToken bound the measured ratio, so a
	// server that reports implausible counts cannot switch the check off.
	minCharsPerToken = 1.5
	maxCharsPerToken = 6.0
	// maxReplyReserve is the most the window keeps free for the reply.
	maxReplyReserve = 1024
	// minGrowthChars is how much a conversation must grow between two calls
	// before fewer (or as many) prompt tokens than the last call's mean the
	// server cut the prompt.
	minGrowthChars = 50
)

// window tracks one run's prompt sizes against the context window: the
// configured ollama.context_length, or the smaller window the server said
// it runs the model with (the OpenAI-compatible API, where the client
// cannot choose it).
type window struct {
	tokens int    // the context window in tokens; 0 disables the checks
	api    string // config.APINative or config.APIOpenAI
	// server names where a window smaller than context_length was read
	// ("GET /props"); "" when the window is context_length.
	server string
	cpt    float64
	// measured says cpt comes from the server's counts.
	measured bool
}

func newWindow(o config.Ollama) *window {
	return &window{tokens: o.ContextLength, api: o.API, cpt: defaultCharsPerToken}
}

// probeWindow returns the run's window. With the OpenAI-compatible API the
// server, not the request, decides the window, so a backend that can tell
// it (model.WindowProber) is asked once, before the first call: a server
// window smaller than context_length becomes the run's window, and the
// first prompt is checked against it instead of being truncated silently
// (doc/design.md §7.7). The native API sends context_length as num_ctx,
// which the server honours.
func probeWindow(ctx context.Context, o config.Ollama, b model.Backend, name string) *window {
	w := newWindow(o)
	p, ok := b.(model.WindowProber)
	if o.API != config.APIOpenAI || !ok {
		return w
	}
	if n, src := p.ServerWindow(ctx, name); n > 0 && (w.tokens <= 0 || n < w.tokens) {
		w.tokens, w.server = n, src
	}
	return w
}

// budget is the number of prompt tokens a call may use: the window less
// room for the reply.
func (w *window) budget() int {
	return w.tokens - min(maxReplyReserve, w.tokens/8)
}

// estimate returns the estimated tokens of a prompt of chars characters.
func (w *window) estimate(chars int) int {
	return int(float64(chars)/w.cpt + 0.5)
}

// before returns a context_overflow error when a prompt of chars
// characters would not fit, else "".
func (w *window) before(chars int) string {
	if w.tokens <= 0 {
		return ""
	}
	est := w.estimate(chars)
	if est <= w.budget() {
		return ""
	}
	how := "estimated"
	if w.measured {
		how = "estimated from the server's counts"
	}
	return fmt.Sprintf("%sthe next prompt is about %d tokens (%d characters, %s), more than the %d that fit %s with room for the reply, so flow stopped before the server would truncate it: %s, or give a narrower task",
		MsgContextOverflow, est, chars, how, w.budget(), w.what(), w.fix())
}

// what names the window: context_length, or the server's own.
func (w *window) what() string {
	if w.server != "" {
		return fmt.Sprintf("the window of %d tokens the server runs the model with (%s)", w.tokens, w.server)
	}
	return fmt.Sprintf("a context_length of %d", w.tokens)
}

// fix says how to get a larger window.
func (w *window) fix() string {
	fix := "raise ollama.context_length (if the model supports a larger window)"
	switch {
	case w.server == "GET /props":
		return "start llama-server with a larger --ctx-size (per slot: the size divided by --parallel), or use api = \"native\" against Ollama"
	case w.server == "GET /api/ps":
		return `set OLLAMA_CONTEXT_LENGTH on the server (on the OpenAI-compatible API Ollama ignores ollama.context_length), or use api = "native"`
	case w.server != "":
		return "start the server with a larger maximum model length (vLLM: --max-model-len)"
	case w.api == config.APIOpenAI:
		fix += `; with api = "openai" against Ollama, the server ignores it: set OLLAMA_CONTEXT_LENGTH on the server, or use api = "native"`
	}
	return fix
}

// promptSize is one call's size as sent and as counted by the server.
type promptSize struct {
	chars, tokens int
}

// after checks the server's prompt_tokens for a prompt of chars characters,
// given the role's previous call (zero for the first), and returns a
// context_overflow error when the server evidently truncated the prompt:
// it counted the whole window, or the conversation grew and the count
// stayed at (or fell a little below) the last one, or grew far less than
// the last call's ratio predicts. Otherwise it refines the
// characters-per-token estimate and returns "".
func (w *window) after(chars, tokens int, prev promptSize) string {
	if w.tokens <= 0 || tokens <= 0 {
		return ""
	}
	var what string
	grew := prev.tokens > 0 && chars >= prev.chars+minGrowthChars
	switch {
	case tokens >= w.tokens:
		what = fmt.Sprintf("the server counted %d prompt tokens, at or over %s", tokens, w.what())
	case grew && tokens*2 < prev.tokens:
		// Far fewer than last time: a server counting only the tokens it
		// did not have cached. Its counts say nothing about the window.
		return ""
	case grew && tokens <= prev.tokens:
		what = fmt.Sprintf("the server counted %d prompt tokens for %d characters, no more than the %d it counted for the previous %d characters", tokens, chars, prev.tokens, prev.chars)
	case grew && float64(tokens*2) < float64(chars)*float64(prev.tokens)/float64(prev.chars):
		what = fmt.Sprintf("the server counted %d prompt tokens for %d characters, under half of what the previous call's %d tokens for %d characters predict", tokens, chars, prev.tokens, prev.chars)
	}
	if what != "" {
		return MsgContextOverflow + what + ", so it truncated the prompt (the system prompt and the tools are what goes first): " + w.fix()
	}
	w.cpt = max(minCharsPerToken, min(maxCharsPerToken, float64(chars)/float64(tokens)))
	w.measured = true
	return ""
}
