package ollama_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"flow/internal/test/ollamatest"
	"flow/runtime/model"
	"flow/runtime/model/ollama"
)

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    ollama.Options
		wantErr string // "" means valid
	}{
		{name: "default origin", opts: ollama.Options{BaseURL: "http://127.0.0.1:11434"}},
		{name: "trailing slash", opts: ollama.Options{BaseURL: "http://127.0.0.1:11434/"}},
		{name: "127/8", opts: ollama.Options{BaseURL: "http://127.1.2.3:8080", API: "openai"}},
		{name: "ipv6 loopback", opts: ollama.Options{BaseURL: "http://[::1]:11434", API: "native"}},
		{name: "localhost", opts: ollama.Options{BaseURL: "https://LocalHost:11434"}},
		{name: "remote allowed", opts: ollama.Options{BaseURL: "https://ollama.example.com", AllowRemote: true}},
		{name: "remote refused", opts: ollama.Options{BaseURL: "http://ollama.example.com:11434"}, wantErr: "not a loopback address"},
		{name: "private address refused", opts: ollama.Options{BaseURL: "http://10.0.0.5:11434"}, wantErr: "not a loopback address"},
		{name: "unspecified address refused", opts: ollama.Options{BaseURL: "http://0.0.0.0:11434"}, wantErr: "not a loopback address"},
		{name: "localhost subdomain refused", opts: ollama.Options{BaseURL: "http://localhost.example.com"}, wantErr: "not a loopback address"},
		{name: "empty", opts: ollama.Options{}, wantErr: "scheme must be http or https"},
		{name: "ftp", opts: ollama.Options{BaseURL: "ftp://127.0.0.1"}, wantErr: "scheme must be http or https"},
		{name: "no scheme", opts: ollama.Options{BaseURL: "127.0.0.1:11434"}, wantErr: "ollama: "},
		{name: "path", opts: ollama.Options{BaseURL: "http://127.0.0.1:11434/v1"}, wantErr: "must be an origin"},
		{name: "query", opts: ollama.Options{BaseURL: "http://127.0.0.1:11434?x=1"}, wantErr: "must be an origin"},
		{name: "user info", opts: ollama.Options{BaseURL: "http://user:pw@127.0.0.1:11434"}, wantErr: "must be an origin"},
		{name: "no host", opts: ollama.Options{BaseURL: "http://:11434"}, wantErr: "has no host"},
		{name: "unknown api", opts: ollama.Options{BaseURL: "http://127.0.0.1", API: "anthropic"}, wantErr: `unknown api "anthropic"`},
		{name: "negative timeout", opts: ollama.Options{BaseURL: "http://127.0.0.1", Timeout: -time.Second}, wantErr: "invalid timeout"},
		{name: "negative context", opts: ollama.Options{BaseURL: "http://127.0.0.1", ContextLength: -1}, wantErr: "invalid context length"},
		{name: "negative temperature", opts: ollama.Options{BaseURL: "http://127.0.0.1", Temperature: -0.1}, wantErr: "invalid temperature"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := ollama.New(tc.opts)
			if tc.wantErr == "" {
				if err != nil || c == nil {
					t.Errorf("New(%+v) = %v, %v, want a client", tc.opts, c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("New(%+v) = %v, want error containing %q", tc.opts, err, tc.wantErr)
			}
		})
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	for _, api := range []string{"native", "openai"} {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			target := ollamatest.New(t, ollamatest.Turn{Content: "from the target"})
			srv := ollamatest.New(t, ollamatest.Turn{RedirectTo: target.URL + "/api/chat"})
			c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = api })
			_, err := c.Chat(t.Context(), model.Request{Model: "m"})
			if err == nil || !strings.Contains(err.Error(), "unexpected HTTP 302 redirect") || !strings.Contains(err.Error(), "redirects are not followed") {
				t.Errorf("Chat() = %v, want a redirect error", err)
			}
			if n := len(target.Requests()); n != 0 {
				t.Errorf("redirect target got %d requests, want 0", n)
			}
		})
	}
}

// proxyChildEnv names the variable that makes TestProxyEnvironmentIgnored
// run its client side in a child process.
const proxyChildEnv = "FLOW_OLLAMA_TEST_PROXY_CHILD"

// TestProxyEnvironmentIgnored runs the client in a child process whose
// environment sets every proxy variable to a recording server, so that the
// standard library reads them fresh. The base URL is a non-loopback address
// (with AllowRemote), because Go never proxies loopback hosts anyway.
func TestProxyEnvironmentIgnored(t *testing.T) {
	if target := os.Getenv(proxyChildEnv); target != "" {
		c, err := ollama.New(ollama.Options{BaseURL: target, AllowRemote: true, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Chat(t.Context(), model.Request{Model: "m"})
		if err == nil {
			t.Fatalf("Chat() through %s succeeded; it must not have reached any server", target)
		}
		return
	}
	t.Parallel()
	proxy := ollamatest.New(t, ollamatest.Turn{Content: "proxied"})
	cmd := exec.Command(os.Args[0], "-test.run=^TestProxyEnvironmentIgnored$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		proxyChildEnv+"=http://192.0.2.1:9", // TEST-NET-1: never a real server
		"HTTP_PROXY="+proxy.URL, "http_proxy="+proxy.URL,
		"HTTPS_PROXY="+proxy.URL, "https_proxy="+proxy.URL,
		"ALL_PROXY="+proxy.URL, "all_proxy="+proxy.URL,
		"NO_PROXY=", "no_proxy=",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("child process: %v\n%s", err, out)
	}
	if n := len(proxy.Requests()); n != 0 {
		t.Errorf("proxy got %d requests, want 0: %+v", n, proxy.Requests())
	}
}

func TestResponseByteLimit(t *testing.T) {
	t.Parallel()
	const over = 2<<20 + 1000
	tests := []struct {
		name string
		api  string
		turn ollamatest.Turn
	}{
		{"native stream", "native", ollamatest.Turn{Content: "start", Oversize: over}},
		{"openai stream", "openai", ollamatest.Turn{Content: "start", Oversize: over}},
		{"openai JSON", "openai", ollamatest.Turn{Content: "start", Oversize: over, NoStream: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := ollamatest.New(t, tc.turn)
			c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = tc.api })
			_, err := c.Chat(t.Context(), model.Request{Model: "m"})
			if err == nil || !strings.Contains(err.Error(), "exceeded 2097152 byte limit") {
				t.Errorf("Chat() = %v, want a byte limit error", err)
			}
		})
	}
	t.Run("under the limit", func(t *testing.T) {
		t.Parallel()
		srv := ollamatest.New(t, ollamatest.Turn{Oversize: 2<<20 - 64<<10})
		resp, err := newClient(t, srv.URL, nil).Chat(t.Context(), model.Request{Model: "m"})
		if err != nil || len(resp.Message.Content) != 2<<20-64<<10 {
			t.Errorf("Chat() = %d bytes, %v, want the whole padded content", len(resp.Message.Content), err)
		}
	})
	t.Run("tags", func(t *testing.T) {
		t.Parallel()
		srv := ollamatest.New(t)
		names := make([]string, 300)
		for i := range names {
			names[i] = strings.Repeat("m", 4000) + string(rune('a'+i%26))
		}
		srv.SetModels(names...)
		_, err := newClient(t, srv.URL, nil).ListModels(t.Context())
		if err == nil || !strings.Contains(err.Error(), "byte limit") {
			t.Errorf("ListModels() = %v, want a byte limit error", err)
		}
	})
}

func TestCallTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		turn ollamatest.Turn
	}{
		{"before the first byte", ollamatest.Turn{Content: "late", Delay: 30 * time.Second}},
		{"between chunks", ollamatest.Turn{Content: "slow stream of text", ChunkDelay: 30 * time.Second}},
	}
	for _, tc := range tests {
		for _, api := range []string{"native", "openai"} {
			t.Run(tc.name+"/"+api, func(t *testing.T) {
				t.Parallel()
				srv := ollamatest.New(t, tc.turn)
				c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = api; o.Timeout = 200 * time.Millisecond })
				start := time.Now()
				_, err := c.Chat(t.Context(), model.Request{Model: "m"})
				if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no complete response within 200ms") {
					t.Errorf("Chat() = %v, want a timeout error", err)
				}
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("Chat() returned after %v, want soon after the 200ms timeout", d)
				}
			})
		}
	}
}

func TestChatCancel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		turn ollamatest.Turn
	}{
		{"before the first byte", ollamatest.Turn{Content: "late", Delay: 30 * time.Second}},
		{"between chunks", ollamatest.Turn{Content: "slow stream of text", ChunkDelay: 30 * time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := ollamatest.New(t, tc.turn)
			c := newClient(t, srv.URL, func(o *ollama.Options) { o.Timeout = time.Minute })
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			_, err := c.Chat(ctx, model.Request{Model: "m"})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Chat() = %v, want an error wrapping context.Canceled", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("Chat() returned after %v, want soon after the cancel", d)
			}
		})
	}
}

func TestLocalhostBaseURL(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t)
	srv.SetVersion("1.0")
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	c := newClient(t, "http://localhost:"+port+"/", nil)
	if v, err := c.Version(t.Context()); err != nil || v != "1.0" {
		t.Errorf("Version() via localhost = %q, %v, want 1.0", v, err)
	}
}
