package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"flow/internal/test/ollamatest"
	"flow/runtime/config"
	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
	"flow/runtime/tools"
)

// What real local models send, on the scripted fake server speaking both
// real protocols through the real client.

// apis are the two chat APIs.
var apis = []string{config.APINative, config.APIOpenAI}

// fakeRun runs task against a fake server answering turns, through the real
// client, and returns the report, the server and the harness.
func fakeRun(t *testing.T, cfg *config.Config, task string, turns ...ollamatest.Turn) (report.Run, *ollamatest.Server, *harness) {
	t.Helper()
	srv := ollamatest.New(t, turns...)
	h := newHarness(t, cfg, ollamaBackend(t, srv, cfg))
	rep := h.run(t, task)
	if n := srv.Unexpected(); n != 0 {
		t.Errorf("fake server got %d unexpected chat requests", n)
	}
	return rep, srv, h
}

// chatRequests returns the recorded chat requests.
func chatRequests(srv *ollamatest.Server) []ollamatest.Recorded {
	var out []ollamatest.Recorded
	for _, r := range srv.Requests() {
		if r.Method == "POST" && (r.Path == "/api/chat" || r.Path == "/v1/chat/completions") {
			out = append(out, r)
		}
	}
	return out
}

// lastMessage returns the last message of a recorded chat request.
func lastMessage(r ollamatest.Recorded) map[string]any {
	msgs, _ := r.Body["messages"].([]any)
	if len(msgs) == 0 {
		return nil
	}
	m, _ := msgs[len(msgs)-1].(map[string]any)
	return m
}

// offeredNames returns the names of the tools a recorded request offered.
func offeredNames(r ollamatest.Recorded) []string {
	var out []string
	list, _ := r.Body["tools"].([]any)
	for _, t := range list {
		fn, _ := t.(map[string]any)["function"].(map[string]any)
		name, _ := fn["name"].(string)
		out = append(out, name)
	}
	return out
}

func TestEmptyReplyRetriedOnceThenReported(t *testing.T) {
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			cfg := testConfig(workspace(t, map[string]string{"a.go": "package a\n"}))
			cfg.Ollama.API = api
			// Empty content and no tool calls: what a real Ollama hands on
			// when the model's tool call is malformed. The second is only
			// whitespace, which is no plan either.
			rep, srv, _ := fakeRun(t, cfg, "fix a.go", ollamatest.Turn{}, ollamatest.Turn{Content: " \n"})

			if rep.Status != report.StatusError || !strings.Contains(rep.Error, MsgEmptyReply) {
				t.Fatalf("Run() = %s %q, want error naming %q", rep.Status, rep.Error, MsgEmptyReply)
			}
			if len(rep.Roles) != 1 || rep.Roles[0].Status != report.StatusError || !strings.HasPrefix(rep.Roles[0].Error, MsgEmptyReply) {
				t.Fatalf("roles = %+v, want only the planner, in error with %q", rep.Roles, MsgEmptyReply)
			}
			for i, c := range modelCalls(rep) {
				if c.Note != "empty reply" {
					t.Errorf("model call %d note = %q, want %q", i, c.Note, "empty reply")
				}
			}
			chats := chatRequests(srv)
			if len(chats) != 2 || rep.ModelCalls != 2 {
				t.Fatalf("chat requests %d, model calls %d; want 2 (one corrective retry, and no coder)", len(chats), rep.ModelCalls)
			}
			retry := lastMessage(chats[1])
			text, _ := retry["content"].(string)
			if retry["role"] != "user" || !strings.Contains(text, "empty") || !strings.Contains(text, "could not be parsed") {
				t.Errorf("retry's last message = %v, want the corrective user message", retry)
			}
			names := offeredNames(chats[1])
			if !slices.Contains(names, "file_write") {
				t.Fatalf("the retry offered %v, want every role's shared list", names)
			}
			// The message names what the planner may call, not the whole
			// list every role is offered.
			for _, n := range []string{"file_read", "file_list", "file_search"} {
				if !strings.Contains(text, n) {
					t.Errorf("corrective message %q does not name the planner's tool %s", text, n)
				}
			}
			if strings.Contains(text, "file_write") {
				t.Errorf("corrective message %q names file_write, which the planner may not call", text)
			}
		})
	}
}

func TestEmptyReplyRecoversAfterRetry(t *testing.T) {
	cfg := testConfig(workspace(t, map[string]string{"a.go": "package a; var broken int\n"}), goLint())
	rep, srv, _ := fakeRun(t, cfg, "fix a.go",
		ollamatest.Turn{},
		ollamatest.Turn{Content: "1. Edit a.go."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "c1", Name: "file_edit", Arguments: args(map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})}}},
		ollamatest.Turn{Content: "Edited."},
		ollamatest.Turn{Content: verdict(true, "fine")},
	)
	if rep.Status != report.StatusOK || rep.Roles[0].Status != report.StatusOK || rep.Roles[0].Turns != 2 {
		t.Fatalf("Run() = %s %q, roles %+v; want ok with a 2-turn planner", rep.Status, rep.Error, rep.Roles)
	}
	coder := chatRequests(srv)[2]
	user, _ := coder.Body["messages"].([]any)[1].(map[string]any)
	if c, _ := user["content"].(string); !strings.Contains(c, "1. Edit a.go.") {
		t.Errorf("coder's user message = %q, want the plan", c)
	}
}

func TestEmptyPlanNeverReachesTheCoder(t *testing.T) {
	for _, cfgEdit := range []func(*config.Config){
		func(c *config.Config) {},
		func(c *config.Config) { c.Agent.MaxIterations = 1 }, // no turn left for a retry
	} {
		cfg := testConfig(workspace(t, nil))
		cfgEdit(cfg)
		turns := []ollamatest.Turn{{}, {}}[:min(2, cfg.Agent.MaxIterations)]
		rep, srv, h := fakeRun(t, cfg, "do it", turns...)
		if rep.Status != report.StatusError || len(rep.Roles) != 1 || !strings.HasPrefix(rep.Error, "The planner got an "+MsgEmptyReply) {
			t.Errorf("max_iterations %d: Run() = %s %q, roles %v; want the empty-reply error after the planner alone", cfg.Agent.MaxIterations, rep.Status, rep.Error, roleStatuses(rep))
		}
		if told := strings.Contains(rep.Error, "told once"); told != (cfg.Agent.MaxIterations > 1) {
			t.Errorf("max_iterations %d: error %q, want it to say whether a retry was made", cfg.Agent.MaxIterations, rep.Error)
		}
		for _, r := range chatRequests(srv) {
			if strings.Contains(string(r.Raw), "Your role now: the coder") {
				t.Errorf("a coder call was made: %s", r.Raw)
			}
		}
		for _, e := range h.events {
			if e.Kind == progress.RoleStart && e.Role != config.RolePlanner {
				t.Errorf("role %s started after an empty plan", e.Role)
			}
		}
	}
}

func TestReviewerEmptyReplyNamedInVerdictError(t *testing.T) {
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			cfg := testConfig(workspace(t, map[string]string{"a.go": "package a; var broken int\n"}), goLint())
			cfg.Ollama.API = api
			rep, srv, _ := fakeRun(t, cfg, "fix a.go",
				ollamatest.Turn{Content: "1. Edit a.go."},
				ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "c1", Name: "file_edit", Arguments: args(map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})}}},
				ollamatest.Turn{Content: "Edited."},
				ollamatest.Turn{}, ollamatest.Turn{}, // empty, and empty after the retry
				ollamatest.Turn{}, // the verdict request, empty too
			)
			rv := rep.Roles[2]
			want := MsgReviewerVerdict + ": " + MsgEmptyReply
			if rv.Status != report.StatusUnverified || rv.Error != want {
				t.Errorf("reviewer = %s %q, want unverified %q", rv.Status, rv.Error, want)
			}
			if rep.Status != report.StatusUnverified || rep.Verified {
				t.Errorf("Run() = %s verified=%v, want unverified (never failed) without a verdict", rep.Status, rep.Verified)
			}
			chats := chatRequests(srv)
			if len(chats) != 6 || chats[5].Format() == nil || lastMessage(chats[5])["content"] != verdictRequest {
				t.Errorf("got %d requests, the last with format %s; want 6, the last the verdict request", len(chats), chats[len(chats)-1].Format())
			}
		})
	}
}

// countingTools is the real registry, counting the calls it executes.
type countingTools struct {
	toolbox
	mu sync.Mutex
	n  map[string]int
}

func (c *countingTools) Call(ctx context.Context, role string, call model.ToolCall) tools.Result {
	c.mu.Lock()
	c.n[call.Name]++
	c.mu.Unlock()
	return c.toolbox.Call(ctx, role, call)
}

// countingHarness is a harness whose toolbox counts executed calls.
func countingHarness(t *testing.T, cfg *config.Config, srv *ollamatest.Server) (*harness, *countingTools) {
	t.Helper()
	h := newHarness(t, cfg, ollamaBackend(t, srv, cfg))
	ct := &countingTools{n: map[string]int{}}
	h.agent.deps.Tools = func(_ context.Context, opts tools.Options) (toolbox, error) {
		ct.toolbox = tools.New(h.disk, opts)
		return ct, nil
	}
	return h, ct
}

func TestRepeatedIdenticalCallNotRunAgain(t *testing.T) {
	cfg := testConfig(workspace(t, map[string]string{"a.go": "package a\n"}))
	cfg.Trusted = false
	read := func(id, argsText string) ollamatest.Turn {
		return ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: id, Name: "file_read", Arguments: argsText}}}
	}
	srv := ollamatest.New(t,
		read("r1", `{"path":"a.go"}`),
		read("r2", `{ "path" : "a.go" }`), // the same call, formatted differently
		ollamatest.Turn{Content: "1. Nothing to change."},
	)
	h, ct := countingHarness(t, cfg, srv)
	rep := h.run(t, "look at a.go")

	if rep.Status != report.StatusUnverified || rep.Roles[0].Status != report.StatusOK {
		t.Fatalf("Run() = %s %q, planner %s; want the read-only run's unverified with an ok planner", rep.Status, rep.Error, rep.Roles[0].Status)
	}
	if ct.n["file_read"] != 1 {
		t.Errorf("file_read executed %d times, want 1 (the repeat is answered from the previous turn)", ct.n["file_read"])
	}
	if rep.ToolCalls != 2 {
		t.Errorf("ToolCalls = %d, want 2: an answered repeat still counts", rep.ToolCalls)
	}
	var got []bool
	for _, e := range toolEvents(rep) {
		got = append(got, e.Repeated)
		if e.Status != report.StatusOK {
			t.Errorf("event %+v, want status ok like the result it repeats", e)
		}
	}
	if diff := cmp.Diff([]bool{false, true}, got); diff != "" {
		t.Errorf("tool events' repeated (-want +got):\n%s", diff)
	}
	chats := chatRequests(srv)
	msgs, _ := chats[2].Body["messages"].([]any)
	if len(msgs) < 2 {
		t.Fatalf("third request has %d messages", len(msgs))
	}
	if last, _ := msgs[len(msgs)-1].(map[string]any); last["role"] != "user" || last["content"] != msgRepeatTurn(config.RolePlanner) {
		t.Errorf("third request ends with %v, want the repeat-turn message", last)
	}
	var res map[string]any
	toolMsg, _ := msgs[len(msgs)-2].(map[string]any)
	c, _ := toolMsg["content"].(string)
	if err := json.Unmarshal([]byte(c), &res); err != nil {
		t.Fatalf("answer to the repeat = %q: %v", c, err)
	}
	prev, _ := res["previous_result"].(map[string]any)
	if res["repeated"] != true || res["note"] != MsgRepeated || res["previous_call_id"] != "r1" || !strings.Contains(prev["content"].(string), "package a") {
		t.Errorf("answer to the repeat = %v, want the note and r1's result", res)
	}
	var repeatedEvents int
	for _, e := range h.events {
		if e.Kind == progress.ToolEnd && e.Repeated {
			repeatedEvents++
			if !strings.Contains(progress.Column(e), "repeated") {
				t.Errorf("progress line %q does not say the call was repeated", progress.Column(e))
			}
		}
	}
	if repeatedEvents != 1 {
		t.Errorf("%d repeated tool_end events, want 1", repeatedEvents)
	}
}

// TestRepeatTurnsEndTheRole: a second turn in a row that only repeats the
// previous calls ends the role (real small models never made a new call
// after such a turn): a planner or a coder that changed nothing is
// unverified with a reason saying so; a coder that changed files finishes
// and its change is verified as usual.
func TestRepeatTurnsEndTheRole(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	cfg := testConfig(dir, goLint())
	cfg.Agent.MaxIterations = 6
	read := tc("r", "file_read", map[string]any{"path": "a.go"})
	be := newScripted(t, do(read), do(read), do(read))
	rep := newHarness(t, cfg, be).run(t, "fix a.go")
	if pl := rep.Roles[0]; pl.Status != report.StatusUnverified || pl.Error != MsgRepeating || pl.Turns != 3 {
		t.Fatalf("planner = %s %q after %d turns, want unverified %q after 3", pl.Status, pl.Error, pl.Turns, MsgRepeating)
	}
	if !strings.Contains(rep.Reason, "The planner stopped because "+MsgRepeating) {
		t.Errorf("reason %q, want the repeating planner named", rep.Reason)
	}

	// A first turn of repeats on the last turn is not told, so the role
	// ends on its budget as before.
	cfg.Agent.MaxIterations = 2
	be = newScripted(t, do(read), do(read))
	rep = newHarness(t, cfg, be).run(t, "fix a.go")
	if pl := rep.Roles[0]; pl.Error != MsgIterationBudget || pl.Turns != 2 {
		t.Errorf("planner with 2 turns = %s %q after %d turns, want %q", pl.Status, pl.Error, pl.Turns, MsgIterationBudget)
	}
	cfg.Agent.MaxIterations = 6

	edit := tc("e", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})
	be = newScripted(t, say("1. Fix a.go."), do(edit), do(edit), do(edit), say(verdict(true, "fixed")))
	rep = newHarness(t, cfg, be).run(t, "fix a.go")
	if co := rep.Roles[1]; co.Status != report.StatusOK || co.Turns != 3 || co.Summary != msgRepeatDone {
		t.Fatalf("coder = %s %q after %d turns (%q), want ok after 3", co.Status, co.Error, co.Turns, co.Summary)
	}
	if rep.Status != report.StatusOK || !rep.Verified || be.left() != 0 {
		t.Errorf("Run() = %s verified=%v (%s), %d replies left; want the change verified and reviewed", rep.Status, rep.Verified, rep.Reason, be.left())
	}
	third := be.requests()[3].Messages
	if last := third[len(third)-1]; last.Role != "user" || last.Content != msgRepeatTurn(config.RoleCoder) {
		t.Errorf("coder's third call ends with %q, want the repeat-turn message", last.Content)
	}

	be = newScripted(t, say("1. Fix a.go."), do(read), do(read), do(read), say(verdict(false, "nothing changed")))
	rep = newHarness(t, cfg, be).run(t, "fix a.go")
	if co := rep.Roles[1]; co.Status != report.StatusUnverified || co.Error != MsgRepeating || co.Turns != 3 {
		t.Errorf("coder without a change = %s %q after %d turns, want unverified %q after 3", co.Status, co.Error, co.Turns, MsgRepeating)
	}
	if rep.Verified || !strings.Contains(rep.Reason, MsgRepeating) {
		t.Errorf("Run() verified=%v (%q), want not verified naming the repeats", rep.Verified, rep.Reason)
	}
}

func TestRepeatAfterAWriteRunsAgain(t *testing.T) {
	cfg := testConfig(workspace(t, map[string]string{"a.go": "package a; var broken int\n"}), goLint())
	srv := ollamatest.New(t,
		ollamatest.Turn{Content: "1. Edit a.go."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "c1", Name: "file_read", Arguments: `{"path":"a.go"}`}}},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{
			{ID: "c2", Name: "file_edit", Arguments: args(map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})},
			{ID: "c3", Name: "file_read", Arguments: `{"path":"a.go"}`},
		}},
		ollamatest.Turn{Content: "Edited."},
		ollamatest.Turn{Content: verdict(true, "ok")},
	)
	h, ct := countingHarness(t, cfg, srv)
	rep := h.run(t, "fix a.go")
	if rep.Status != report.StatusOK {
		t.Fatalf("Run() = %s %q, want ok", rep.Status, rep.Error)
	}
	if ct.n["file_read"] != 2 {
		t.Errorf("file_read executed %d times, want 2: a write in between makes the earlier result stale", ct.n["file_read"])
	}
	c, _ := lastMessage(chatRequests(srv)[3])["content"].(string)
	if !strings.Contains(c, "fixed") || strings.Contains(c, `"repeated"`) {
		t.Errorf("answer to the read after the edit = %q, want the fresh file", c)
	}
}

// TestEveryReviewAsksForStructuredOutput: every reviewer request carries
// the verdict's JSON Schema as the server's structured output, and the
// tools every role is declared (the shared prefix); the planner's and the
// coder's never do. A server that ignores the format and answers prose is
// asked once more for the verdict.
func TestEveryReviewAsksForStructuredOutput(t *testing.T) {
	var schema any
	if err := json.Unmarshal([]byte(VerdictSchema), &schema); err != nil {
		t.Fatalf("VerdictSchema is not JSON: %v", err)
	}
	tests := []struct {
		name     string
		review   []ollamatest.Turn
		approved bool
	}{
		{"structured answer", []ollamatest.Turn{{Content: verdict(true, "the change is right")}}, true},
		{"server ignoring the format: prose, then fenced", []ollamatest.Turn{
			{Content: "I read the diff; the edit is what the task asked for."},
			{Content: "Here:\n```json\n" + verdict(false, "wrong", "a.go still broken") + "\n```"},
		}, false},
	}
	for _, api := range apis {
		for _, tc := range tests {
			t.Run(api+"/"+tc.name, func(t *testing.T) {
				cfg := testConfig(workspace(t, map[string]string{"a.go": "package a; var broken int\n"}), goLint())
				cfg.Ollama.API = api
				turns := append([]ollamatest.Turn{
					{Content: "1. Edit a.go."},
					{ToolCalls: []ollamatest.Call{{ID: "c1", Name: "file_edit", Arguments: args(map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})}}},
					{Content: "Edited."},
				}, tc.review...)
				rep, srv, _ := fakeRun(t, cfg, "fix a.go", turns...)
				rv := rep.Roles[2]
				if rv.Status != report.StatusOK || rv.Approved == nil || *rv.Approved != tc.approved {
					t.Fatalf("reviewer = %+v, want ok with approved %v", rv, tc.approved)
				}
				chats := chatRequests(srv)
				if len(chats) != 3+len(tc.review) {
					t.Fatalf("%d chat requests, want %d", len(chats), 3+len(tc.review))
				}
				coderTools := offeredNames(chats[1])
				for i, r := range chats {
					if i < 3 {
						if r.Format() != nil {
							t.Errorf("request %d (planner, coder) asked for format %s", i, r.Format())
						}
						continue
					}
					var got any
					if err := json.Unmarshal(r.Format(), &got); err != nil {
						t.Fatalf("reviewer request %d format %q: %v", i, r.Format(), err)
					}
					if diff := cmp.Diff(schema, got); diff != "" {
						t.Errorf("reviewer request %d format (-want +got):\n%s", i, diff)
					}
					if names := offeredNames(r); !slices.Equal(names, coderTools) {
						t.Errorf("reviewer request %d declared tools %v, want the shared list %v", i, names, coderTools)
					}
				}
			})
		}
	}
}

func TestModelCallEvents(t *testing.T) {
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			cfg := testConfig(workspace(t, map[string]string{"a.go": "package a; var broken int\n"}), goLint())
			cfg.Ollama.API = api
			rep, _, h := fakeRun(t, cfg, "fix a.go",
				ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "p1", Name: "file_list"}}, PromptTokens: 300, CompletionTokens: 12, Delay: 20 * time.Millisecond},
				ollamatest.Turn{Content: "1. Edit a.go.", PromptTokens: 400, CompletionTokens: 30, DoneReason: "stop"},
				ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "c1", Name: "file_edit", Arguments: args(map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})}}, PromptTokens: 500, CompletionTokens: 20},
				ollamatest.Turn{Content: "Edited.", PromptTokens: 600, CompletionTokens: 5, DoneReason: "length"},
				ollamatest.Turn{Content: verdict(true, "ok"), PromptTokens: 700, CompletionTokens: 25},
			)
			if rep.Status != report.StatusOK {
				t.Fatalf("Run() = %s %q, want ok", rep.Status, rep.Error)
			}
			calls := modelCalls(rep)
			if len(calls) != rep.ModelCalls || len(calls) != 5 {
				t.Fatalf("%d model-call events, %d model calls; want 5 of each", len(calls), rep.ModelCalls)
			}
			type row struct {
				Role               string
				Cycle, Turn        int
				Prompt, Completion int
				Reason             string
				Native, Text       int
			}
			toolsReason := "stop"
			if api == config.APIOpenAI {
				toolsReason = "tool_calls"
			}
			want := []row{
				{"planner", 0, 1, 300, 12, toolsReason, 1, 0},
				{"planner", 0, 2, 400, 30, "stop", 0, 0},
				{"coder", 1, 1, 500, 20, toolsReason, 1, 0},
				{"coder", 1, 2, 600, 5, "length", 0, 0},
				{"reviewer", 1, 1, 700, 25, "stop", 0, 0},
			}
			var got []row
			for _, c := range calls {
				got = append(got, row{c.Role, c.Cycle, c.Turn, c.PromptTokens, c.CompletionTokens, c.DoneReason, c.NativeToolCalls, c.TextToolCalls})
				if c.Status != report.StatusOK {
					t.Errorf("model call %+v, want status ok", c)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("model-call events (-want +got):\n%s", diff)
			}
			if calls[0].DurationMS < 20 {
				t.Errorf("first model call duration_ms = %d, want at least the scripted 20 ms delay", calls[0].DurationMS)
			}
			// The JSON report holds them in order with the tool events.
			b, err := report.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			var decoded struct {
				Events []map[string]any `json:"events"`
			}
			if err := json.Unmarshal(b, &decoded); err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, e := range decoded.Events {
				k, _ := e["kind"].(string)
				if k == "" {
					k, _ = e["tool"].(string)
				}
				kinds = append(kinds, k)
			}
			wantKinds := []string{"model_call", "file_list", "model_call", "model_call", "file_edit", "model_call", "model_call"}
			if diff := cmp.Diff(wantKinds, kinds); diff != "" {
				t.Errorf("report events (-want +got):\n%s", diff)
			}
			if e := decoded.Events[0]; e["prompt_tokens"] != float64(300) || e["completion_tokens"] != float64(12) || e["duration_ms"] == nil {
				t.Errorf("first event = %v, want tokens 300/12 and a duration", e)
			}
			// The CLI and MCP progress lines show the same figures.
			var lines []string
			for _, e := range h.events {
				if e.Kind == progress.ModelReply {
					lines = append(lines, progress.Column(e))
				}
			}
			if len(lines) != 5 || !strings.Contains(lines[0], "(300+12 tokens, "+toolsReason+")") || !strings.Contains(lines[3], "(600+5 tokens, length)") {
				t.Errorf("model_reply progress lines = %q, want tokens and done reasons", lines)
			}
		})
	}
}
