package ollamatest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"flow/internal/test/ollamatest"
)

// post sends body to srv and returns the status, content type and body.
func post(t *testing.T, srv *ollamatest.Server, path, body string) (int, string, string) {
	t.Helper()
	resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s response: %v", path, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// lines decodes NDJSON.
func lines(t *testing.T, body string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestNativeStream(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t, ollamatest.Turn{
		Content: "Hello, wörld!", Thinking: "hmm",
		ToolCalls: []ollamatest.Call{
			{ID: "call_1", Name: "f", Arguments: `{"a": [1, 2]}`},
			{Name: "g", Arguments: `{"a": broken`},
		},
		PromptTokens: 7, CompletionTokens: 9,
	})
	status, ctype, body := post(t, srv, "/api/chat", `{"model":"m","messages":[]}`)
	if status != 200 || ctype != "application/x-ndjson" {
		t.Fatalf("POST /api/chat = %d %s, want 200 application/x-ndjson", status, ctype)
	}
	chunks := lines(t, body)
	var content, thinking strings.Builder
	var calls []any
	for _, ch := range chunks[:len(chunks)-1] {
		msg := ch["message"].(map[string]any)
		content.WriteString(msg["content"].(string))
		if th, ok := msg["thinking"].(string); ok {
			thinking.WriteString(th)
		}
		if tc, ok := msg["tool_calls"].([]any); ok {
			calls = append(calls, tc...)
		}
		if ch["done"] != false {
			t.Errorf("chunk %v: done = %v, want false", ch, ch["done"])
		}
	}
	if content.String() != "Hello, wörld!" || thinking.String() != "hmm" {
		t.Errorf("content %q, thinking %q, want the turn's", content.String(), thinking.String())
	}
	if len(chunks) < 6 {
		t.Errorf("got %d chunks, want the content split into several", len(chunks))
	}
	wantCalls := []any{
		map[string]any{"id": "call_1", "function": map[string]any{"index": 0.0, "name": "f", "arguments": map[string]any{"a": []any{1.0, 2.0}}}},
		map[string]any{"function": map[string]any{"index": 1.0, "name": "g", "arguments": `{"a": broken`}},
	}
	if !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("tool calls = %v, want %v", calls, wantCalls)
	}
	last := chunks[len(chunks)-1]
	if last["done"] != true || last["done_reason"] != "stop" || last["prompt_eval_count"] != 7.0 || last["eval_count"] != 9.0 {
		t.Errorf("last chunk = %v, want done with reason stop and counts 7/9", last)
	}
}

func TestNativeMidStreamError(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t, ollamatest.Turn{Content: "part", Error: "runner died"})
	status, _, body := post(t, srv, "/api/chat", `{"model":"m"}`)
	chunks := lines(t, body)
	last := chunks[len(chunks)-1]
	if status != 200 || last["error"] != "runner died" {
		t.Errorf("POST /api/chat = %d, last line %v, want 200 and an error line", status, last)
	}
	for _, ch := range chunks {
		if ch["done"] == true {
			t.Errorf("chunk %v is done; an errored stream must not finish", ch)
		}
	}
}

func TestOpenAIStreamSplitsArguments(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t, ollamatest.Turn{
		Content: "ok",
		ToolCalls: []ollamatest.Call{
			{ID: "a", Name: "f", Arguments: `{"path":"one.go"}`},
			{ID: "b", Name: "g", Arguments: `{"path":"two.go"}`},
		},
		PromptTokens: 1, CompletionTokens: 2,
	})
	status, ctype, body := post(t, srv, "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`)
	if status != 200 || ctype != "text/event-stream" {
		t.Fatalf("POST = %d %s, want 200 text/event-stream", status, ctype)
	}
	events := strings.Split(strings.TrimSpace(body), "\n\n")
	if events[len(events)-1] != "data: [DONE]" {
		t.Errorf("last event = %q, want data: [DONE]", events[len(events)-1])
	}
	args := map[float64][]string{}
	var order []float64
	var usage any
	for _, ev := range events[:len(events)-1] {
		var ch struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Index    float64 `json:"index"`
						Function struct {
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
			Usage any `json:"usage"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &ch); err != nil {
			t.Fatalf("event %q: %v", ev, err)
		}
		if ch.Usage != nil {
			usage = ch.Usage
		}
		for _, c := range ch.Choices {
			for _, tc := range c.Delta.ToolCalls {
				if tc.Function.Arguments != "" {
					args[tc.Index] = append(args[tc.Index], tc.Function.Arguments)
					order = append(order, tc.Index)
				}
			}
		}
	}
	for i, want := range []string{`{"path":"one.go"}`, `{"path":"two.go"}`} {
		if got := args[float64(i)]; len(got) != 3 || strings.Join(got, "") != want {
			t.Errorf("call %d argument pieces = %q, want %s in 3 pieces", i, got, want)
		}
	}
	if !reflect.DeepEqual(order, []float64{0, 1, 0, 1, 0, 1}) {
		t.Errorf("argument pieces arrive for calls %v, want interleaved", order)
	}
	if usage == nil {
		t.Errorf("no usage chunk, want one when include_usage is set")
	}
}

func TestOpenAINotStreamed(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t, ollamatest.Turn{Content: "hi", ToolCalls: []ollamatest.Call{{ID: "x", Name: "f", Arguments: `{"bad`}}})
	status, ctype, body := post(t, srv, "/v1/chat/completions", `{"model":"m"}`)
	var got struct {
		Choices []struct {
			Message struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name, Arguments string
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || status != 200 || !strings.HasPrefix(ctype, "application/json") {
		t.Fatalf("POST = %d %s %q (%v), want a JSON completion", status, ctype, body, err)
	}
	c := got.Choices[0]
	if c.Message.Content != "hi" || c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Arguments != `{"bad` {
		t.Errorf("completion = %+v, want content, finish reason tool_calls and the raw arguments", c)
	}
}

func TestQueue(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t, ollamatest.Turn{Model: "a", Content: "for a"}, ollamatest.Turn{Content: "any"})
	if n := srv.Pending(); n != 2 {
		t.Errorf("Pending() = %d, want 2", n)
	}
	status, _, body := post(t, srv, "/api/chat", `{"model":"b"}`)
	if status != 500 || !strings.Contains(body, `next turn is for model \"a\"`) || srv.Unexpected() != 1 || srv.Pending() != 2 {
		t.Errorf("chat for the wrong model = %d %s, unexpected %d, pending %d; want 500, 1, 2", status, body, srv.Unexpected(), srv.Pending())
	}
	for _, m := range []string{"a", "b"} {
		if status, _, _ := post(t, srv, "/api/chat", `{"model":"`+m+`"}`); status != 200 {
			t.Errorf("chat for %s = %d, want 200", m, status)
		}
	}
	select {
	case <-srv.Drained():
	case <-time.After(10 * time.Second):
		t.Errorf("Drained() not closed after the last turn")
	}
	status, _, body = post(t, srv, "/v1/chat/completions", `{"model":"a"}`)
	if status != 500 || !strings.Contains(body, "ollamatest: no scripted turn left") || srv.Unexpected() != 2 {
		t.Errorf("chat with an empty queue = %d %s, unexpected %d; want 500 and 2", status, body, srv.Unexpected())
	}
	reqs := srv.Requests()
	if len(reqs) != 4 || reqs[1].Body["model"] != "a" || reqs[3].Path != "/v1/chat/completions" || string(reqs[0].Raw) != `{"model":"b"}` {
		t.Errorf("Requests() = %+v, want the 4 chat requests in order", reqs)
	}
}

func TestModelsAndCatalog(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t, ollamatest.Turn{Content: "x"})
	srv.SetModels("qwen:7b", "llama3")
	srv.SetVersion("1.2.3")
	srv.SetCapabilities("embed", "embedding")

	if status, _, body := post(t, srv, "/api/chat", `{"model":"other"}`); status != 404 || !strings.Contains(body, `model \"other\" not found, try pulling it first`) {
		t.Errorf("chat for an uninstalled model = %d %s, want Ollama's 404", status, body)
	}
	if srv.Pending() != 1 {
		t.Errorf("Pending() = %d after a 404, want the turn kept", srv.Pending())
	}
	if status, _, _ := post(t, srv, "/api/chat", `{"model":"llama3:latest"}`); status != 200 {
		t.Errorf("chat for llama3:latest = %d, want 200 (same model as llama3)", status)
	}
	for _, tc := range []struct{ path, want string }{
		{"/api/version", `{"version":"1.2.3"}`},
		{"/api/tags", `"name":"llama3"`},
	} {
		resp, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), tc.want) {
			t.Errorf("GET %s = %d %s, want containing %s", tc.path, resp.StatusCode, b, tc.want)
		}
	}
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"model":"qwen:7b"}`, 200, `"capabilities":["completion","tools"]`},
		{`{"name":"embed"}`, 200, `"capabilities":["embedding"]`},
		{`{"model":"nope"}`, 404, `model 'nope' not found`},
	} {
		if status, _, body := post(t, srv, "/api/show", tc.body); status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("POST /api/show %s = %d %s, want %d containing %s", tc.body, status, body, tc.status, tc.want)
		}
	}
	srv.SetFailure("/api/version", 503, "busy")
	if resp, err := http.Get(srv.URL + "/api/version"); err != nil || resp.StatusCode != 503 {
		t.Errorf("GET /api/version with a failure set = %v, %v, want 503", resp, err)
	} else {
		resp.Body.Close()
	}
	if srv.Unexpected() != 0 {
		t.Errorf("Unexpected() = %d, want 0", srv.Unexpected())
	}
	if status, _, _ := post(t, srv, "/api/embed", `{}`); status != 404 || srv.Unexpected() != 1 {
		t.Errorf("POST /api/embed = %d, unexpected %d, want 404 and 1", status, srv.Unexpected())
	}
	if resp, err := http.Get(srv.URL + "/api/chat"); err != nil || resp.StatusCode != 405 || srv.Unexpected() != 2 {
		t.Errorf("GET /api/chat = %v, %v, unexpected %d, want 405 and 2", resp, err, srv.Unexpected())
	} else {
		resp.Body.Close()
	}
}

func TestStatusAndRedirect(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t,
		ollamatest.Turn{Status: 503, Error: "busy"},
		ollamatest.Turn{Status: 400},
		ollamatest.Turn{ModelNotFound: true},
		ollamatest.Turn{RedirectTo: "http://127.0.0.1:1/elsewhere"},
	)
	tests := []struct {
		path   string
		status int
		want   string
	}{
		{"/api/chat", 503, `{"error":"busy"}`},
		{"/v1/chat/completions", 400, `"message":"Bad Request"`},
		{"/api/chat", 404, `model \"m\" not found`},
	}
	for _, tc := range tests {
		if status, _, body := post(t, srv, tc.path, `{"model":"m"}`); status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("POST %s = %d %s, want %d containing %s", tc.path, status, body, tc.status, tc.want)
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "http://127.0.0.1:1/elsewhere" {
		t.Errorf("redirect turn = %d %q, want 302 to the script's location", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestCloseEndsDelays(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(ollamatest.Turn{Content: "never", Delay: time.Hour})
	errc := make(chan error, 1)
	go func() {
		resp, err := http.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(`{"model":"m"}`))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	for len(srv.Requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() { srv.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close() did not return while a turn was delayed")
	}
	<-errc // the client sees the connection end; any outcome is fine
	srv.Close()
}

func TestLoadScript(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	example := docExample(t, string(doc))
	srv := ollamatest.New(t)
	if err := srv.LoadScript([]byte(example)); err != nil {
		t.Fatalf("LoadScript(package doc example) = %v", err)
	}
	if n := srv.Pending(); n != 10 {
		t.Errorf("Pending() = %d, want the example's 10 turns", n)
	}

	srv = ollamatest.New(t)
	script := `{"models":["m"],"version":"9","turns":[
		{"tool_calls":[{"id":"1","name":"f","arguments":{"path": "a"}},{"name":"g","arguments":"{\"x\": bad"},{"name":"h"}],
		 "delay_ms": 1, "prompt_tokens": 3}]}`
	if err := srv.LoadScript([]byte(script)); err != nil {
		t.Fatalf("LoadScript() = %v", err)
	}
	_, _, body := post(t, srv, "/api/chat", `{"model":"m"}`)
	var calls []any
	for _, ch := range lines(t, body) {
		if msg, ok := ch["message"].(map[string]any); ok && msg["tool_calls"] != nil {
			calls = append(calls, msg["tool_calls"].([]any)...)
		}
	}
	wantCalls := []any{
		map[string]any{"id": "1", "function": map[string]any{"index": 0.0, "name": "f", "arguments": map[string]any{"path": "a"}}},
		map[string]any{"function": map[string]any{"index": 1.0, "name": "g", "arguments": `{"x": bad`}},
		map[string]any{"function": map[string]any{"index": 2.0, "name": "h", "arguments": map[string]any{}}},
	}
	if !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("scripted tool calls = %v, want %v", calls, wantCalls)
	}

	for _, tc := range []struct{ script, want string }{
		{`{"turns":[{"contnet":"typo"}]}`, `unknown field "contnet"`},
		{`{"turns":[{"delay_ms":-1}]}`, "turn 1: delay_ms -1 out of range"},
		{`{"turns":[{},{"status":42}]}`, "turn 2: status 42 is not an HTTP status"},
		{`{"turns":[{"oversize":-5}]}`, "oversize -5 is negative"},
		{`{"turns":[]} {}`, "data after the script object"},
		{`[]`, "parse script"},
	} {
		err := ollamatest.NewServer().LoadScript([]byte(tc.script))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadScript(%s) = %v, want error containing %q", tc.script, err, tc.want)
		}
	}
}

// docExample returns the JSON example in the package comment.
func docExample(t *testing.T, doc string) string {
	t.Helper()
	start := strings.Index(doc, "//\t{\n")
	end := strings.Index(doc, "//\t}\n")
	if start < 0 || end < start {
		t.Fatal("no script example in doc.go")
	}
	var b bytes.Buffer
	for _, line := range strings.Split(doc[start:end+len("//\t}")], "\n") {
		b.WriteString(strings.TrimPrefix(line, "//\t"))
		b.WriteByte('\n')
	}
	return b.String()
}

// get sends GET path to srv and returns the status and body.
func get(t *testing.T, srv *ollamatest.Server, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestContextLengthPsAndOpenAIModels(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t, ollamatest.Turn{Content: "hi"})
	srv.SetModels("qwen:7b", "llama3")
	srv.SetContextLength("qwen:7b", 32768)
	srv.SetLoaded("qwen:7b", 4096)

	if status, _, body := post(t, srv, "/api/show", `{"model":"qwen:7b"}`); status != 200 ||
		!strings.Contains(body, `"model_info":{"general.architecture":"ollamatest","ollamatest.context_length":32768}`) {
		t.Errorf("POST /api/show = %d %s, want the context length in model_info", status, body)
	}
	if status, body := get(t, srv, "/api/ps"); status != 200 || !strings.Contains(body, `"name":"qwen:7b"`) || !strings.Contains(body, `"context_length":4096`) {
		t.Errorf("GET /api/ps = %d %s, want qwen:7b loaded with 4096", status, body)
	}
	srv.SetLoaded("qwen:7b", 0)
	if status, body := get(t, srv, "/api/ps"); status != 200 || strings.TrimSpace(body) != `{"models":[]}` {
		t.Errorf("GET /api/ps after unloading = %d %s, want an empty list", status, body)
	}
	status, body := get(t, srv, "/v1/models")
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}
	if status != 200 || json.Unmarshal([]byte(body), &list) != nil || list.Object != "list" || len(list.Data) != 2 ||
		list.Data[0].ID != "qwen:7b" || list.Data[1].Object != "model" {
		t.Errorf("GET /v1/models = %d %s, want the OpenAI list of both models", status, body)
	}

	// Not Ollama: /api/* is 404 in OpenAI's error shape, /v1/* still works.
	srv.SetOpenAIOnly(true)
	for _, path := range []string{"/api/version", "/api/tags", "/api/ps"} {
		if status, body := get(t, srv, path); status != 404 || !strings.Contains(body, `"type":"not_found_error"`) {
			t.Errorf("GET %s on an OpenAI-only server = %d %s, want 404", path, status, body)
		}
	}
	if status, _ := get(t, srv, "/v1/models"); status != 200 {
		t.Errorf("GET /v1/models on an OpenAI-only server = %d, want 200", status)
	}
	if status, _, body := post(t, srv, "/v1/chat/completions", `{"model":"qwen:7b","messages":[]}`); status != 200 || !strings.Contains(body, `"content":"hi"`) {
		t.Errorf("POST /v1/chat/completions on an OpenAI-only server = %d %s, want the turn", status, body)
	}
}
