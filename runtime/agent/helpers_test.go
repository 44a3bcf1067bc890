package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"flow/bufferfs"
	"flow/runtime/check"
	"flow/runtime/config"
	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
	"flow/runtime/tools"
)

// step is one scripted model answer.
type step struct {
	resp model.Response
	err  error
	// hook runs when the call arrives, before the answer is returned (for
	// example to change a file on disk during review).
	hook func(model.Request)
}

// scripted is a hand-written model.Backend that replays steps in order,
// records every request, and fails the test on an unexpected extra call.
type scripted struct {
	t     testing.TB
	mu    sync.Mutex
	steps []step
	reqs  []model.Request
}

func newScripted(t testing.TB, steps ...step) *scripted {
	return &scripted{t: t, steps: steps}
}

func (s *scripted) Chat(ctx context.Context, req model.Request) (model.Response, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	if len(s.steps) == 0 {
		s.mu.Unlock()
		s.t.Errorf("unexpected model call #%d (model %s, %d messages)", len(s.reqs), req.Model, len(req.Messages))
		return model.Response{}, errors.New("scripted: no step left")
	}
	st := s.steps[0]
	s.steps = s.steps[1:]
	s.mu.Unlock()
	if st.hook != nil {
		st.hook(req)
	}
	if err := ctx.Err(); err != nil {
		return model.Response{}, err
	}
	return st.resp, st.err
}

// requests returns the recorded requests.
func (s *scripted) requests() []model.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]model.Request(nil), s.reqs...)
}

// left returns the number of unused steps.
func (s *scripted) left() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.steps)
}

// say is a final answer without tool calls.
func say(content string) step {
	return step{resp: model.Response{Message: model.Message{Role: model.RoleAssistant, Content: content}}}
}

// do is an answer with tool calls.
func do(calls ...model.ToolCall) step {
	return step{resp: model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: calls}}}
}

// tc builds a tool call with JSON-encoded arguments (a string is used as is).
func tc(id, name string, args any) model.ToolCall {
	var raw string
	switch a := args.(type) {
	case string:
		raw = a
	case nil:
		raw = "{}"
	default:
		b, err := json.Marshal(a)
		if err != nil {
			panic(err)
		}
		raw = string(b)
	}
	return model.ToolCall{ID: id, Name: name, Arguments: raw}
}

// verdict is a bare reviewer verdict.
func verdict(approved bool, summary string, issues ...string) string {
	if issues == nil {
		issues = []string{}
	}
	b, _ := json.Marshal(map[string]any{"approved": approved, "summary": summary, "issues": issues})
	return string(b)
}

// workspace creates a temporary workspace with files.
func workspace(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// testConfig is the reference test suite's default configuration: trusted,
// four iterations, one cycle.
func testConfig(dir string, checks ...config.Check) *config.Config {
	c := config.Default()
	c.Workspace = dir
	c.Trusted = true
	c.Agent.MaxIterations = 4
	c.Agent.MaxCycles = 1
	// The tests script a planner; the skip of agent.planner = "auto" has
	// its own (plan_test.go).
	c.Agent.Planner = config.PlannerAlways
	c.Checks = checks
	return &c
}

// shCheck is a check running a shell script (the test's own argv, not a
// model-controlled command).
func shCheck(name, kind string, filetypes []string, script string) config.Check {
	return config.Check{
		Name: name, Cmd: []string{"sh", "-c", script}, Timeout: 20000,
		Required: true, Kind: kind, Filetypes: filetypes,
	}
}

// harness wires an agent to a real Disk, registry and check runner.
type harness struct {
	dir    string
	cfg    *config.Config
	agent  *loop
	runner *check.Runner
	disk   *bufferfs.Disk

	mu     sync.Mutex
	events []progress.Event
}

func newHarness(t testing.TB, cfg *config.Config, backend model.Backend) *harness {
	t.Helper()
	disk, err := bufferfs.NewDisk(cfg.Workspace, bufferfs.DiskOptions{Trusted: cfg.Trusted, Protected: cfg.Protected()})
	if err != nil {
		t.Fatalf("NewDisk(%s) error = %v", cfg.Workspace, err)
	}
	t.Cleanup(func() { disk.Close() })
	h := &harness{dir: cfg.Workspace, cfg: cfg, disk: disk}
	h.runner = &check.Runner{Root: cfg.Workspace, Trusted: cfg.Trusted, Checks: cfg.Checks}
	h.agent = newLoop(cfg, loopDeps{
		Backend: backend,
		FS:      disk,
		Checks: func(ev checkHooks) tools.CheckRunner {
			h.runner.OnStart, h.runner.OnEnd = ev.OnStart, ev.OnEnd
			return h.runner
		},
	})
	return h
}

// record is the harness's event sink.
func (h *harness) record(e progress.Event) {
	h.mu.Lock()
	h.events = append(h.events, e)
	h.mu.Unlock()
}

func (h *harness) run(t testing.TB, task string) report.Run {
	t.Helper()
	return h.runCtx(t.Context(), t, task)
}

func (h *harness) runCtx(ctx context.Context, t testing.TB, task string) report.Run {
	t.Helper()
	rep := h.agent.Run(ctx, task, h.record)
	if _, err := report.Marshal(rep); err != nil {
		t.Errorf("report does not marshal: %v", err)
	}
	return rep
}

func (h *harness) eventKinds() []progress.Kind {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []progress.Kind
	for _, e := range h.events {
		out = append(out, e.Kind)
	}
	return out
}

func (h *harness) read(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// toolMessages returns the tool messages of a request.
func toolMessages(req model.Request) []model.Message {
	var out []model.Message
	for _, m := range req.Messages {
		if m.Role == model.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

// toolNames returns the names of the tools offered in a request.
func toolNames(req model.Request) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

// resultOf decodes a tool message's JSON content.
func resultOf(t testing.TB, m model.Message) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(m.Content), &v); err != nil {
		t.Fatalf("tool message %s is not JSON: %v\n%s", m.ToolCallID, err, m.Content)
	}
	return v
}

// roleStatuses summarises the roles of a report, e.g. "planner:ok".
func roleStatuses(rep report.Run) []string {
	var out []string
	for _, r := range rep.Roles {
		out = append(out, fmt.Sprintf("%s:%s", r.Role, r.Status))
	}
	return out
}

// toolEvents returns the report's tool-call events, without the model
// calls.
func toolEvents(rep report.Run) []report.Event {
	var out []report.Event
	for _, e := range rep.Events {
		if e.Kind == "" {
			out = append(out, e)
		}
	}
	return out
}

// modelCalls returns the report's model-call events.
func modelCalls(rep report.Run) []report.Event {
	var out []report.Event
	for _, e := range rep.Events {
		if e.Kind == report.EventModelCall {
			out = append(out, e)
		}
	}
	return out
}
