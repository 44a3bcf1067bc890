package ollamatest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// maxRequestBytes bounds the request bodies the server reads.
const maxRequestBytes = 32 << 20

// Server is a scripted fake Ollama server. Create one with [New] in tests or
// [NewServer] and [Server.Start] elsewhere; queue answers with
// [Server.Enqueue]. All methods are safe for concurrent use.
type Server struct {
	// URL is the base URL, "http://127.0.0.1:PORT", once started.
	URL string
	// Addr is the address Start listens on; "" means "127.0.0.1:0".
	Addr string
	// OnRequest, when set before Start, is called with every request as it
	// is recorded.
	OnRequest func(Recorded)

	mu         sync.Mutex
	turns      []Turn
	requests   []Recorded
	unexpected int
	version    string
	models     []string
	caps       map[string][]string
	ctxLens    map[string]int    // /api/show model_info context length
	sizes      map[string]string // /api/show details.parameter_size ("1.5B")
	loaded     []loadedModel     // /api/ps
	loadCtx    int               // the window an empty /api/generate loads with
	slotCtx    int               // /props n_ctx (llama.cpp); 0: no /props
	maxLen     map[string]int    // /v1/models max_model_len (vLLM)
	openaiOnly bool
	// noJSONSchema refuses response_format json_schema (SetNoJSONSchema).
	noJSONSchema bool
	failures     map[string]failure
	inflight     int // turns being answered
	drained      chan struct{}
	isDrained    bool
	isClosed     bool
	active       sync.WaitGroup // running handlers
	quit         chan struct{}  // closed by Close; aborts delays
	srv          *http.Server
	closeOnce    sync.Once
}

// failure is a status forced on every request to one path.
type failure struct {
	status  int
	message string
}

// Recorded is one request the server received.
type Recorded struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// Body is the request body decoded as a JSON object, or nil when it is
	// empty or not an object. Numbers decode as float64.
	Body map[string]any `json:"body,omitempty"`
	// Raw is the request body as received.
	Raw []byte `json:"-"`
	// Header holds the request headers.
	Header http.Header `json:"-"`
}

// New starts a server on 127.0.0.1 with turns queued and closes it when the
// test ends.
func New(t testing.TB, turns ...Turn) *Server {
	t.Helper()
	s := NewServer()
	if err := s.Start(); err != nil {
		t.Fatalf("ollamatest: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	s.Enqueue(turns...)
	return s
}

// NewServer returns a server that is not yet listening.
func NewServer() *Server {
	return &Server{
		version: "0.0.0-ollamatest",
		caps:    map[string][]string{},
		ctxLens: map[string]int{},
		drained: make(chan struct{}),
		quit:    make(chan struct{}),
	}
}

// Start listens on s.Addr and serves in the background; s.URL is set when
// it returns.
func (s *Server) Start() error {
	addr := s.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	s.URL = "http://" + ln.Addr().String()
	s.mu.Lock()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	srv := s.srv
	s.mu.Unlock()
	go srv.Serve(ln)
	return nil
}

// Close stops the server: scripted delays end, connections close, and Close
// returns once every handler has returned. It is safe to call twice.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.isClosed = true
		srv := s.srv
		s.mu.Unlock()
		close(s.quit)
		if srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if srv.Shutdown(ctx) != nil {
				err = srv.Close()
			}
			cancel()
		}
		s.active.Wait()
	})
	return err
}

// Enqueue appends turns to the queue that /api/chat and
// /v1/chat/completions answer from, first in first out.
func (s *Server) Enqueue(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

// Pending returns the number of queued turns not yet taken.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns)
}

// Drained is closed the first time the queue is empty after a turn has been
// answered in full.
func (s *Server) Drained() <-chan struct{} { return s.drained }

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Chats returns a copy of the chat requests received so far (native and
// OpenAI-compatible), in order: the model calls, without the requests a
// client makes to learn about the server (/api/show, /api/ps, the load
// request, /props).
func (s *Server) Chats() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Recorded
	for _, r := range s.requests {
		if r.Path == "/api/chat" || r.Path == "/v1/chat/completions" {
			out = append(out, r)
		}
	}
	return out
}

// Unexpected returns how many requests the script did not foresee: chat
// calls with no turn left or for another model than the next turn's, and
// requests to unknown paths or with the wrong method.
func (s *Server) Unexpected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unexpected
}

// SetVersion sets the version /api/version reports.
func (s *Server) SetVersion(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version = v
}

// SetModels sets the installed models that /api/tags lists. Once set, chat
// and /api/show requests for other models get Ollama's 404 answer; with no
// models set, chat accepts any model.
func (s *Server) SetModels(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = slices.Clone(names)
}

// SetCapabilities sets what /api/show reports for a model and makes the
// model known to /api/show. Models without capabilities set report
// "completion" and "tools".
func (s *Server) SetCapabilities(name string, caps ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps[name] = slices.Clone(caps)
}

// SetContextLength sets the model's own context length that /api/show
// reports in model_info (as "ollamatest.context_length", with
// "general.architecture" "ollamatest"); 0 removes it.
func (s *Server) SetContextLength(name string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n == 0 {
		delete(s.ctxLens, name)
		return
	}
	s.ctxLens[name] = n
}

// SetParameterSize makes /api/show describe name as a model of size
// parameters, as Ollama writes it ("1.5B", "494.03M"): details'
// parameter_size, and model_info's general.parameter_count. "" removes it.
func (s *Server) SetParameterSize(name, size string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sizes == nil {
		s.sizes = map[string]string{}
	}
	if size == "" {
		delete(s.sizes, name)
		return
	}
	s.sizes[name] = size
}

// parameterCount is the count a size such as "1.5B" stands for; 0 when
// it is not one.
func parameterCount(size string) int64 {
	unit := map[byte]float64{'K': 1e3, 'M': 1e6, 'B': 1e9, 'T': 1e12}
	if size == "" || unit[size[len(size)-1]] == 0 {
		return 0
	}
	var n float64
	if _, err := fmt.Sscanf(size[:len(size)-1], "%g", &n); err != nil {
		return 0
	}
	return int64(n * unit[size[len(size)-1]])
}

// loadedModel is one model /api/ps lists.
type loadedModel struct {
	name          string
	contextLength int
}

// SetLoaded makes /api/ps list the model as loaded with a context window
// of contextLength tokens; 0 removes it.
func (s *Server) SetLoaded(name string, contextLength int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loaded = slices.DeleteFunc(s.loaded, func(m loadedModel) bool { return m.name == name })
	if contextLength > 0 {
		s.loaded = append(s.loaded, loadedModel{name, contextLength})
	}
}

// SetLoadContext sets the window an empty POST /api/generate (Ollama's
// "load the model" request, made with the server's default options) loads
// a model with: the server's OLLAMA_CONTEXT_LENGTH. The default, 0, loads
// it with 4096 tokens, the smallest default Ollama picks.
func (s *Server) SetLoadContext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loadCtx = n
}

// SetSlotContext makes GET /props answer as llama.cpp's llama-server does,
// with a context window of n tokens per slot
// (default_generation_settings.n_ctx); 0 makes /props unknown again.
func (s *Server) SetSlotContext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slotCtx = n
}

// SetNoJSONSchema makes the OpenAI endpoint refuse a response_format of
// type json_schema with a 500 and llama-cpp-python's validation message, as
// its server (0.3.x) does; it takes a schema only as {"type":
// "json_object", "schema": …}. Refused requests use no turn.
func (s *Server) SetNoJSONSchema(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noJSONSchema = on
}

// SetMaxModelLen makes GET /v1/models list name with max_model_len n, as
// vLLM does; 0 removes it.
func (s *Server) SetMaxModelLen(name string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxLen == nil {
		s.maxLen = map[string]int{}
	}
	if n > 0 {
		s.maxLen[name] = n
	} else {
		delete(s.maxLen, name)
	}
}

// SetOpenAIOnly makes the server behave like an OpenAI-compatible server
// that is not Ollama (llama.cpp's llama-server, vLLM): every /api/ path
// answers 404 in OpenAI's error shape, while /v1/chat/completions and
// /v1/models work.
func (s *Server) SetOpenAIOnly(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.openaiOnly = on
}

// SetFailure makes every later request to path (for example "/api/tags")
// fail with status and {"error": message}; status 0 clears it. Chat turns
// are not consumed while a failure is set.
func (s *Server) SetFailure(path string, status int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failures == nil {
		s.failures = map[string]failure{}
	}
	if status == 0 {
		delete(s.failures, path)
		return
	}
	s.failures[path] = failure{status: status, message: message}
}

// ServeHTTP records the request and answers it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.isClosed {
		s.mu.Unlock()
		http.Error(w, "ollamatest: server closed", http.StatusServiceUnavailable)
		return
	}
	s.active.Add(1)
	s.mu.Unlock()
	defer s.active.Done()

	rec := s.record(r)
	s.mu.Lock()
	f, failing := s.failures[r.URL.Path]
	openaiOnly := s.openaiOnly
	s.mu.Unlock()
	if failing {
		writeJSON(w, f.status, map[string]string{"error": f.message})
		return
	}
	if openaiOnly && strings.HasPrefix(r.URL.Path, "/api/") {
		// llama-server's answer to a path it does not serve.
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
			"code": 404, "message": "File Not Found", "type": "not_found_error"}})
		return
	}

	var methods []string
	var serve func(http.ResponseWriter, *http.Request, Recorded)
	switch r.URL.Path {
	case "/api/chat":
		methods, serve = []string{"POST"}, s.chatNative
	case "/v1/chat/completions":
		methods, serve = []string{"POST"}, s.chatOpenAI
	case "/api/tags":
		methods, serve = []string{"GET", "HEAD"}, s.tags
	case "/api/version":
		methods, serve = []string{"GET", "HEAD"}, s.serveVersion
	case "/api/show":
		methods, serve = []string{"POST"}, s.show
	case "/api/ps":
		methods, serve = []string{"GET", "HEAD"}, s.ps
	case "/api/generate":
		methods, serve = []string{"POST"}, s.load
	case "/v1/models":
		methods, serve = []string{"GET"}, s.openaiModels
	case "/props":
		methods, serve = []string{"GET"}, s.props
	default:
		s.countUnexpected()
		http.NotFound(w, r)
		return
	}
	if !slices.Contains(methods, r.Method) {
		s.countUnexpected()
		w.Header().Set("Allow", strings.Join(methods, ", "))
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	serve(w, r, rec)
}

func (s *Server) chatNative(w http.ResponseWriter, r *http.Request, rec Recorded) {
	s.chat(w, r, rec, false)
}

func (s *Server) chatOpenAI(w http.ResponseWriter, r *http.Request, rec Recorded) {
	s.chat(w, r, rec, true)
}

// record reads and stores the request.
func (s *Server) record(r *http.Request) Recorded {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes))
	rec := Recorded{Method: r.Method, Path: r.URL.Path, Raw: raw, Header: r.Header.Clone()}
	var body map[string]any
	if json.Unmarshal(raw, &body) == nil {
		rec.Body = body
	}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	hook := s.OnRequest
	s.mu.Unlock()
	if hook != nil {
		hook(rec)
	}
	return rec
}

func (s *Server) countUnexpected() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unexpected++
}

// known reports whether name is an installed model or has capabilities
// set. "m" and "m:latest" name the same model. s.mu must be held.
func (s *Server) known(name string) bool {
	same := func(a string) bool {
		return a == name || a == name+":latest" || a+":latest" == name
	}
	if slices.ContainsFunc(s.models, same) {
		return true
	}
	for m := range s.caps {
		if same(m) {
			return true
		}
	}
	return false
}

func (s *Server) tags(w http.ResponseWriter, _ *http.Request, _ Recorded) {
	s.mu.Lock()
	names := slices.Clone(s.models)
	s.mu.Unlock()
	type tag struct {
		Name       string `json:"name"`
		Model      string `json:"model"`
		ModifiedAt string `json:"modified_at"`
		Size       int64  `json:"size"`
		Digest     string `json:"digest"`
	}
	list := make([]tag, len(names))
	for i, n := range names {
		list[i] = tag{Name: n, Model: n, ModifiedAt: "2026-01-01T00:00:00Z"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": list})
}

func (s *Server) serveVersion(w http.ResponseWriter, _ *http.Request, _ Recorded) {
	s.mu.Lock()
	v := s.version
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"version": v})
}

func (s *Server) show(w http.ResponseWriter, _ *http.Request, rec Recorded) {
	name, _ := rec.Body["model"].(string)
	if name == "" {
		name, _ = rec.Body["name"].(string) // the older field name
	}
	s.mu.Lock()
	known := name != "" && s.known(name)
	caps, ok := s.caps[name]
	ctxLen := s.ctxLens[name]
	size := s.sizes[name]
	s.mu.Unlock()
	if !known {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model '%s' not found", name)})
		return
	}
	if !ok {
		caps = []string{"completion", "tools"}
	}
	info := map[string]any{}
	if ctxLen > 0 {
		info["general.architecture"] = "ollamatest"
		info["ollamatest.context_length"] = ctxLen
	}
	details := map[string]any{"format": "gguf", "family": "ollamatest"}
	if size != "" {
		details["parameter_size"] = size
		info["general.parameter_count"] = parameterCount(size)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"capabilities": caps,
		"details":      details,
		"model_info":   info,
	})
}

// ps answers GET /api/ps with the models set by SetLoaded.
func (s *Server) ps(w http.ResponseWriter, _ *http.Request, _ Recorded) {
	s.mu.Lock()
	loaded := slices.Clone(s.loaded)
	s.mu.Unlock()
	type running struct {
		Name          string         `json:"name"`
		Model         string         `json:"model"`
		Size          int64          `json:"size"`
		Digest        string         `json:"digest"`
		Details       map[string]any `json:"details"`
		ExpiresAt     string         `json:"expires_at"`
		SizeVRAM      int64          `json:"size_vram"`
		ContextLength int            `json:"context_length"`
	}
	list := make([]running, len(loaded))
	for i, m := range loaded {
		list[i] = running{Name: m.name, Model: m.name, Details: map[string]any{"format": "gguf", "family": "ollamatest"},
			ExpiresAt: "2026-01-01T00:05:00Z", ContextLength: m.contextLength}
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": list})
}

// load answers POST /api/generate as Ollama does when the prompt is empty:
// the model is loaded with the server's default window (SetLoadContext)
// and the answer is done with done_reason "load". A request with a prompt
// is not scripted: 404, counted as unexpected.
func (s *Server) load(w http.ResponseWriter, r *http.Request, rec Recorded) {
	name, _ := rec.Body["model"].(string)
	if prompt, _ := rec.Body["prompt"].(string); prompt != "" {
		s.countUnexpected()
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	known, n := len(s.models) == 0 || s.known(name), cmp.Or(s.loadCtx, 4096) // as chat: no models set serves every name
	s.mu.Unlock()
	if !known {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model '%s' not found", name)})
		return
	}
	s.SetLoaded(name, n)
	writeJSON(w, http.StatusOK, map[string]any{"model": name, "created_at": "2026-01-01T00:00:00Z",
		"response": "", "done": true, "done_reason": "load"})
}

// openaiModels answers GET /v1/models with the models set by SetModels,
// in the OpenAI list shape.
func (s *Server) openaiModels(w http.ResponseWriter, _ *http.Request, _ Recorded) {
	s.mu.Lock()
	names := slices.Clone(s.models)
	maxLen := maps.Clone(s.maxLen)
	s.mu.Unlock()
	type entry struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		Created     int64  `json:"created"`
		OwnedBy     string `json:"owned_by"`
		MaxModelLen int    `json:"max_model_len,omitempty"`
	}
	list := make([]entry, len(names))
	for i, n := range names {
		list[i] = entry{ID: n, Object: "model", Created: 1767225600, OwnedBy: "library", MaxModelLen: maxLen[n]}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": list})
}

// props answers GET /props as llama-server does, when SetSlotContext set
// a window; else 404, as Ollama and vLLM answer.
func (s *Server) props(w http.ResponseWriter, r *http.Request, _ Recorded) {
	s.mu.Lock()
	n := s.slotCtx
	s.mu.Unlock()
	if n == 0 {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"default_generation_settings": map[string]any{"n_ctx": n, "params": map[string]any{}},
		"total_slots":                 1,
		"chat_template":               "",
	})
}

// writeJSON sends v as a JSON response with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// errClosed reports that the server or the client went away during a wait.
var errClosed = errors.New("ollamatest: request abandoned")

// sleep waits d unless the request's context ends or the server closes.
func (s *Server) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return errClosed
	case <-s.quit:
		return errClosed
	}
}
