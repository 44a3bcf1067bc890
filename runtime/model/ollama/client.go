// Package ollama is flow's model backend: a small net/http client for
// Ollama's native chat API (POST /api/chat, NDJSON streaming) and for the
// OpenAI-compatible chat endpoint (POST /v1/chat/completions, SSE streaming)
// that Ollama, llama.cpp's llama-server, vLLM and LM Studio serve.
//
// The client is deliberately narrow (doc/design.md §7): it talks only to the
// configured origin, which must be a loopback address unless remote hosts are
// allowed; it never follows redirects, ignores proxy environment variables,
// sends no API key, never retries, bounds every call by a timeout and every
// response body by 2 MiB.
package ollama

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"flow/runtime/model"
)

// API values for [Options.API].
const (
	apiNative = "native"
	apiOpenAI = "openai"
)

// maxResponseBytes caps every response body (doc/design.md §15).
const maxResponseBytes = 2 << 20

// maxCompletionTokens caps every reply (num_predict, max_tokens): a model
// that rambles without repeating itself exactly (which [loopGuard] would
// end) otherwise writes until the call times out.
const maxCompletionTokens = 8192

// completionBound is the reply bound of req: req.MaxTokens when it is
// lower, else the smaller of maxCompletionTokens and half the context
// window; 0 (none) only without a context length or request bound.
func (c *Client) completionBound(req model.Request) int {
	bound := min(maxCompletionTokens, c.opts.ContextLength/2)
	if req.MaxTokens > 0 && (bound <= 0 || req.MaxTokens < bound) {
		bound = req.MaxTokens
	}
	return max(0, bound)
}

// temperature is the sampling temperature of req: its own when it sets
// one that is valid, else the client's.
func (c *Client) temperature(req model.Request) float64 {
	if t := req.Temperature; t != nil && *t >= 0 && !math.IsNaN(*t) && !math.IsInf(*t, 0) {
		return *t
	}
	return c.opts.Temperature
}

// Options configures a [Client].
type Options struct {
	// BaseURL is the server's origin, such as "http://127.0.0.1:11434".
	// Trailing slashes are ignored; a path, query or user info is refused.
	BaseURL string
	// API is "native" (Ollama's /api/chat) or "openai"
	// (/v1/chat/completions); "" means "native".
	API string
	// Temperature is the sampling temperature sent with every chat call
	// that does not set its own (model.Request.Temperature).
	Temperature float64
	// ContextLength is sent as options.num_ctx (native) and bounds
	// max_tokens (openai); 0 sends neither.
	ContextLength int
	// Timeout bounds each call, from sending the request to reading the last
	// byte of the response; 0 means no bound beyond the caller's context.
	Timeout time.Duration
	// AllowRemote permits a non-loopback host.
	AllowRemote bool
	// Think is sent as the native API's think flag. It is always sent,
	// because Ollama turns thinking on by default for models that support it.
	Think bool
}

// Client is a chat backend and model catalog for one server. It is safe for
// concurrent use.
type Client struct {
	base string // scheme://host[:port], no trailing slash
	opts Options
	http *http.Client
}

var (
	_ model.Backend = (*Client)(nil)
	_ model.Catalog = (*Client)(nil)
)

// New validates opts and returns a client. It does not contact the server.
func New(opts Options) (*Client, error) {
	switch opts.API {
	case "":
		opts.API = apiNative
	case apiNative, apiOpenAI:
	default:
		return nil, fmt.Errorf("ollama: unknown api %q (want %q or %q)", opts.API, apiNative, apiOpenAI)
	}
	if math.IsNaN(opts.Temperature) || math.IsInf(opts.Temperature, 0) || opts.Temperature < 0 {
		return nil, fmt.Errorf("ollama: invalid temperature %v", opts.Temperature)
	}
	if opts.ContextLength < 0 {
		return nil, fmt.Errorf("ollama: invalid context length %d", opts.ContextLength)
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("ollama: invalid timeout %v", opts.Timeout)
	}
	base, err := parseBaseURL(opts.BaseURL, opts.AllowRemote)
	if err != nil {
		return nil, err
	}
	return &Client{base: base, opts: opts, http: newHTTPClient(opts.AllowRemote)}, nil
}

// parseBaseURL checks that raw is an http(s) origin and, unless allowRemote,
// that its host is loopback. It returns the origin without trailing slash.
func parseBaseURL(raw string, allowRemote bool) (string, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil {
		return "", fmt.Errorf("ollama: invalid base URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("ollama: base URL %q: scheme must be http or https", raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return "", fmt.Errorf("ollama: base URL %q has no host", raw)
	}
	if u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return "", fmt.Errorf("ollama: base URL %q must be an origin (scheme://host[:port]) without path, query or user info", raw)
	}
	if !allowRemote && !isLoopbackHost(u.Hostname()) {
		return "", fmt.Errorf("ollama: base URL %q is not a loopback address (127.0.0.0/8, ::1, localhost); set allow_remote to use a remote server", raw)
	}
	return u.Scheme + "://" + u.Host, nil
}

// isLoopbackHost reports whether host is "localhost" or a loopback IP.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newHTTPClient returns a client that ignores proxy settings, follows no
// redirects and, unless allowRemote, refuses to connect to a non-loopback
// address even when a name such as "localhost" resolves to one.
func newHTTPClient(allowRemote bool) *http.Client {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if !allowRemote {
		d.Control = func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				return fmt.Errorf("refusing to connect to non-loopback address %s", address)
			}
			return nil
		}
	}
	tr := &http.Transport{
		Proxy:               nil, // proxy environment variables are ignored on purpose
		DialContext:         d.DialContext,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// withTimeout bounds one call by the configured timeout on top of ctx.
func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.opts.Timeout <= 0 {
		return context.WithCancel(ctx)
	}
	cause := fmt.Errorf("no complete response within %s: %w", c.opts.Timeout, context.DeadlineExceeded)
	return context.WithTimeoutCause(ctx, c.opts.Timeout, cause)
}

// errTooLarge is returned when a response body passes maxResponseBytes.
var errTooLarge = fmt.Errorf("response exceeded %d byte limit", maxResponseBytes)

// statusError is a non-2xx answer from the server.
type statusError struct {
	op      string // "POST /api/chat"
	code    int
	message string // the server's error message, or the status text
}

func (e *statusError) Error() string {
	return fmt.Sprintf("ollama: %s (HTTP %d from %s)", e.message, e.code, e.op)
}

// Unwrap makes a 404 "not found" answer match [model.ErrModelNotFound].
func (e *statusError) Unwrap() error {
	if e.code == http.StatusNotFound && strings.Contains(strings.ToLower(e.message), "not found") {
		return model.ErrModelNotFound
	}
	return nil
}

// callError wraps err, which happened during op, preferring the context's
// cause when the call was cancelled or timed out.
func callError(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("ollama: %s: %w", op, context.Cause(ctx))
	}
	return fmt.Errorf("ollama: %s: %w", op, err)
}
