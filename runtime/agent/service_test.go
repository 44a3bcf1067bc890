package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"flow/bufferfs"
	"flow/internal/test/ollamatest"
	"flow/runtime/config"
	"flow/runtime/editor"
	"flow/runtime/journal"
	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// newService wires a Service to a real Disk and a journal in t.TempDir().
func newService(t *testing.T, cfg *config.Config, backend model.Backend, state string) *Service {
	t.Helper()
	disk, err := bufferfs.NewDisk(cfg.Workspace, bufferfs.DiskOptions{Trusted: true, Protected: cfg.Protected()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { disk.Close() })
	store, err := journal.Open(state, cfg.Workspace, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return NewService(cfg, ServiceOptions{FS: disk, Backend: backend, Store: store, Version: "test"})
}

func TestServiceRunThenStatusAndUndo(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a\n"})
	cfg := testConfig(dir, shCheck("lint", "lint", []string{"go"}, "grep -q 'func A' a.go"))
	backend := newScripted(t,
		say("plan: edit a.go"),
		do(tc("w1", "file_write", map[string]any{"path": "a.go", "content": "package a\n\nfunc A() {}\n"}),
			tc("w2", "file_write", map[string]any{"path": "new/b.go", "content": "package b\n"})),
		say("done"),
		say(verdict(true, "fine")),
	)
	state := t.TempDir()
	svc := newService(t, cfg, backend, state)

	var kinds []progress.Kind
	rep := svc.Run(t.Context(), "add A", func(e progress.Event) { kinds = append(kinds, e.Kind) })
	if rep.Status != report.StatusOK || !rep.Verified {
		t.Fatalf("Run = %s (%s %s), want ok and verified", rep.Status, rep.Reason, rep.Error)
	}
	if len(kinds) == 0 || kinds[0] != progress.RunStart || kinds[len(kinds)-1] != progress.RunEnd {
		t.Errorf("events = %v, want run_start … run_end", kinds)
	}

	// Another Service over the same workspace (another process) sees the run.
	other := newService(t, cfg, newScripted(t), state)
	st := other.Status(t.Context())
	last, ok := st.LastReport.(map[string]any)
	if !ok || last["run_id"] != rep.RunID || last["status"] != report.StatusOK {
		t.Fatalf("Status().LastReport = %v, want run %s", st.LastReport, rep.RunID)
	}
	if !st.Capabilities.Undo || st.Busy {
		t.Errorf("Status capabilities/busy = %+v / %v, want undo and not busy", st.Capabilities, st.Busy)
	}

	u := other.Undo(t.Context(), "")
	if u.Status != report.StatusOK || u.RunID != rep.RunID {
		t.Fatalf("Undo = %+v, want ok for %s", u, rep.RunID)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.go")); string(got) != "package a\n" {
		t.Errorf("a.go after undo = %q, want the original", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "new/b.go")); !os.IsNotExist(err) {
		t.Errorf("new/b.go after undo: err = %v, want it removed", err)
	}
}

func TestServiceSingleWriter(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a\n"})
	cfg := testConfig(dir, shCheck("lint", "lint", []string{"go"}, "true"))
	state := t.TempDir()
	entered, release := make(chan struct{}), make(chan struct{})
	blocking := step{resp: model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "plan"}},
		hook: func(model.Request) { close(entered); <-release }}
	backend := newScripted(t, blocking, say("nothing to do"), say(verdict(true, "ok")))
	svc := newService(t, cfg, backend, state)

	done := make(chan report.Run)
	go func() { done <- svc.Run(t.Context(), "task", nil) }()
	<-entered

	if c := svc.Check(t.Context(), "", nil); c.Status != report.StatusBusy || !strings.Contains(c.Error, "busy") {
		t.Errorf("Check during a run = %+v, want busy", c)
	}
	if r := svc.Run(t.Context(), "second", nil); r.Status != report.StatusBusy {
		t.Errorf("second Run = %s %q, want busy", r.Status, r.Error)
	}
	if st := svc.Status(t.Context()); !st.Busy {
		t.Error("Status().Busy = false during a run")
	}
	// A second process (another Store on the same workspace) is refused by
	// the workspace lock and told which process holds it.
	other := newService(t, cfg, newScripted(t), state)
	r := other.Run(t.Context(), "elsewhere", nil)
	if r.Status != report.StatusBusy || !strings.Contains(r.Error, "process") {
		t.Errorf("Run from a second store = %s %q, want busy naming the holder", r.Status, r.Error)
	}
	close(release)
	if first := <-done; first.Status == report.StatusBusy {
		t.Errorf("first run = %s, want it to finish normally", first.Status)
	}
	if c := svc.Check(t.Context(), "", nil); c.Status != report.StatusOK {
		t.Errorf("Check after the run = %s, want ok", c.Status)
	}
}

func TestServiceSetModel(t *testing.T) {
	dir := workspace(t, nil)
	cfg := testConfig(dir)
	cfg.Models.Coder = "special"
	svc := newService(t, cfg, newScripted(t), t.TempDir())
	svc.SetModel("other:7b")
	st := svc.Status(t.Context())
	if m := st.Models; m.Planner != "other:7b" || m.Coder != "other:7b" || m.Reviewer != "other:7b" ||
		m.Servers == nil || *m.Servers != (report.RoleServers{Planner: "ollama", Coder: "ollama", Reviewer: "ollama"}) {
		t.Errorf("models after SetModel = %+v, want other:7b for every role", st.Models)
	}
	if names := strings.Join(svc.ToolNames(), ","); !strings.Contains(names, "file_write") {
		t.Errorf("ToolNames() = %s, want the trusted coder's tools", names)
	}
}

// TestServiceTranscript: with agent.transcript each model call is a line of
// the run's transcript.jsonl: the messages it added to its conversation
// and the reply; without it there is no transcript.
func TestServiceTranscript(t *testing.T) {
	script := func() *scripted {
		return newScripted(t,
			say("plan: edit a.go"),
			do(tc("w1", "file_write", map[string]any{"path": "a.go", "content": "package a\n\nfunc A() {}\n"})),
			say("done"),
			say(verdict(true, "fine")),
		)
	}
	dir := workspace(t, map[string]string{"a.go": "package a\n"})
	cfg := testConfig(dir, shCheck("lint", "lint", []string{"go"}, "grep -q 'func A' a.go"))
	cfg.Agent.Transcript = true
	state := t.TempDir()
	rep := newService(t, cfg, script(), state).Run(t.Context(), "add A", nil)
	if rep.Status != report.StatusOK {
		t.Fatalf("Run = %s (%s %s), want ok", rep.Status, rep.Reason, rep.Error)
	}
	paths, _ := filepath.Glob(filepath.Join(state, "workspaces", "*", "runs", "*-"+rep.RunID, "transcript.jsonl"))
	if len(paths) != 1 {
		t.Fatalf("transcripts of run %s: %v, want one", rep.RunID, paths)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var entries []transcriptEntry
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var e transcriptEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("transcript line %q: %v", line, err)
		}
		entries = append(entries, e)
	}
	var got []string
	for _, e := range entries {
		got = append(got, fmt.Sprintf("%s %d/%d sent=%d", e.Role, e.Cycle, e.Turn, len(e.Sent)))
	}
	want := []string{"planner 0/1 sent=2", "coder 1/1 sent=2", "coder 1/2 sent=2", "reviewer 1/1 sent=2"}
	if !slices.Equal(got, want) {
		t.Fatalf("transcript = %v, want %v", got, want)
	}
	first, second := entries[1], entries[2]
	if first.Sent[0].Role != model.RoleSystem || !strings.Contains(first.Sent[1].Content, "add A") || !slices.Contains(first.Tools, "file_edit") {
		t.Errorf("coder's first call sent %+v with tools %v, want the system prompt, the task and the tools", first.Sent, first.Tools)
	}
	if first.Reply == nil || len(first.Reply.ToolCalls) != 1 || first.Reply.ToolCalls[0].Name != "file_write" {
		t.Errorf("coder's first reply = %+v, want its file_write call", first.Reply)
	}
	// The second call adds the reply and the call's result, nothing else.
	if second.Sent[0].Role != model.RoleAssistant || second.Sent[1].Role != model.RoleTool || second.Tools != nil {
		t.Errorf("coder's second call sent %+v (tools %v), want the reply and the tool result only", second.Sent, second.Tools)
	}
	if second.Reply == nil || second.Reply.Content != "done" {
		t.Errorf("coder's second reply = %+v, want \"done\"", second.Reply)
	}
	if rv := entries[3]; rv.Format == "" || rv.Reply == nil || !strings.Contains(rv.Reply.Content, `"approved"`) {
		t.Errorf("reviewer entry = %+v, want its verdict schema and verdict", rv)
	}

	// Off (the default): no transcript.
	dir = workspace(t, map[string]string{"a.go": "package a\n"})
	cfg = testConfig(dir, shCheck("lint", "lint", []string{"go"}, "grep -q 'func A' a.go"))
	state = t.TempDir()
	rep = newService(t, cfg, script(), state).Run(t.Context(), "add A", nil)
	if paths, _ := filepath.Glob(filepath.Join(state, "workspaces", "*", "runs", "*", "transcript.jsonl")); rep.Status != report.StatusOK || len(paths) != 0 {
		t.Errorf("run %s without agent.transcript left %v, want no transcript", rep.Status, paths)
	}
}

// TestTranscriptFailureIsAWarning: a transcript that cannot be written is
// said once, as a warning event and in the report's event of that call,
// and the run goes on as it would without it.
func TestTranscriptFailureIsAWarning(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	h := newHarness(t, testConfig(dir, goLint()), newScripted(t, editScript(verdict(true, "ok"))...))
	calls := 0
	h.agent.deps.Transcript = func(any) error { calls++; return errors.New("disk full") }
	rep := h.run(t, "fix a.go")
	if rep.Status != report.StatusOK || !rep.Verified {
		t.Fatalf("Run() = %s verified=%v (%s), want the run to go on", rep.Status, rep.Verified, rep.Reason)
	}
	var warnings []string
	for _, e := range h.events {
		if e.Kind == progress.Warning {
			warnings = append(warnings, e.Message)
		}
	}
	if calls != 1 || len(warnings) != 1 || !strings.Contains(warnings[0], "transcript is not kept from here on: disk full") {
		t.Errorf("%d transcript calls, warnings %q; want one try and one warning naming the error", calls, warnings)
	}
	// The report says it too, on the call whose entry was lost.
	var notes []string
	for _, e := range rep.Events {
		if e.Kind == report.EventModelCall && e.Note != "" {
			notes = append(notes, e.Note)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "transcript is not kept from here on: disk full") {
		t.Errorf("model-call notes = %q, want the lost transcript on the first call only", notes)
	}
}

// TestTranscriptKeepsPartialReply: a model call that fails after it began
// to stream (an error from the server, or ollama.timeout) keeps what it
// streamed in the transcript, beside the error; without it a run cut by a
// timeout says nothing of what the model was writing.
func TestTranscriptKeepsPartialReply(t *testing.T) {
	for _, tc := range []struct {
		name    string
		turn    ollamatest.Turn
		timeout float64
		err     string
	}{
		{"server error", ollamatest.Turn{Content: "1. Read a.go and then", Error: "model runner has unexpectedly stopped"}, 0, "unexpectedly stopped"},
		{"timeout", ollamatest.Turn{Content: "1. Read a.go and then change", ChunkDelay: 5 * time.Second}, 1, "no complete response within 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(workspace(t, map[string]string{"a.go": "package a\n"}))
			cfg.Trusted = false
			if tc.timeout > 0 {
				cfg.Ollama.Timeout = tc.timeout
			}
			h, _ := countingHarness(t, cfg, ollamatest.New(t, tc.turn))
			var entries []transcriptEntry
			h.agent.deps.Transcript = func(e any) error {
				entries = append(entries, e.(transcriptEntry))
				return nil
			}
			rep := h.run(t, "look at a.go")
			if rep.Status != report.StatusError || len(entries) != 1 {
				t.Fatalf("Run() = %s (%s), %d transcript entries; want error and one entry", rep.Status, rep.Error, len(entries))
			}
			e := entries[0]
			if e.Reply != nil || !strings.Contains(strings.ToLower(e.Error), tc.err) {
				t.Errorf("entry reply %+v, error %q; want no reply and an error with %q", e.Reply, e.Error, tc.err)
			}
			// The timeout cuts the stream after its first chunk or more.
			if e.Partial == "" || !strings.HasPrefix(tc.turn.Content, e.Partial) {
				t.Errorf("entry partial = %q, want the start of %q", e.Partial, tc.turn.Content)
			}
		})
	}
}

func TestServiceRecordsReadOnlyRuns(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a\n"})
	cfg := testConfig(dir)
	cfg.Trusted = false
	state := t.TempDir()
	svc := newService(t, cfg, newScripted(t, say("plan: nothing to change")), state)
	rep := svc.Run(t.Context(), "look around", nil)
	if rep.Status != report.StatusUnverified || rep.Reason != ReasonReadOnly {
		t.Fatalf("untrusted Run = %s %q, want unverified read-only", rep.Status, rep.Reason)
	}
	other := newService(t, cfg, newScripted(t), state)
	last, _ := other.Status(t.Context()).LastReport.(map[string]any)
	if last["run_id"] != rep.RunID {
		t.Errorf("LastReport = %v, want the read-only run %s", last, rep.RunID)
	}
	if u := other.Undo(t.Context(), ""); u.Status != report.StatusOK || len(u.Restored)+len(u.Removed) != 0 {
		t.Errorf("Undo of a read-only run = %+v, want ok with nothing to do", u)
	}
}

func TestServiceStatusBoundsTheEditorProbe(t *testing.T) {
	dir := workspace(t, nil)
	svc := newService(t, testConfig(dir), newScripted(t), t.TempDir())
	var deadline time.Time
	svc.opts.EditorStatusTimeout = 100 * time.Millisecond
	svc.opts.Editor = statusSession(func(ctx context.Context) report.Editor {
		deadline, _ = ctx.Deadline()
		<-ctx.Done() // a hung editor
		return report.Editor{Status: report.StatusUnavailable, Tools: []string{}}
	})
	start := time.Now()
	st := svc.Status(t.Context())
	if deadline.IsZero() || deadline.Sub(start) > time.Second {
		t.Errorf("editor probe deadline = %v after start, want about 100ms", deadline.Sub(start))
	}
	if st.Editor.Status != report.StatusUnavailable {
		t.Errorf("Status().Editor = %+v, want unavailable", st.Editor)
	}
}

// statusSession is an editor session that only answers Status.
type statusSession func(ctx context.Context) report.Editor

func (f statusSession) Status(ctx context.Context) report.Editor { return f(ctx) }
func (statusSession) Schemas(context.Context) ([]map[string]any, error) {
	return nil, errors.New("no tools")
}
func (statusSession) Call(context.Context, string, map[string]any) (map[string]any, error) {
	return nil, errors.New("no tools")
}
func (statusSession) Context(context.Context) (editor.Context, error) {
	return editor.Context{}, errors.New("no context")
}
