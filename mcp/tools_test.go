package mcp

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/runtime/report"
	"flow/runtime/tools"
)

// TestToolCallRejections ports the reference program's 7 injection cases
// plus the other tools/call errors. A malformed request is a -32602
// protocol error; arguments that do not match the schema are a tool result
// with isError whose reason the model can read (MCP 2025-11-25). None
// reaches the runtime.
func TestToolCallRejections(t *testing.T) {
	runUsage := `{"task": string, "idempotency_key"?: string, "wait_seconds"?: integer}`
	for _, tc := range []struct {
		name, params string
		protocol     bool   // a -32602 error, else an isError result
		message      string // the error's message, or the result's reason
	}{
		{"unknown tool", `{"name":"shell_exec","arguments":{"cmd":"rm -rf /"}}`, true, `Unknown tool "shell_exec"; the tools are flow_run, flow_status, flow_check and flow_review`},
		{"extra cwd argument", `{"name":"flow_run","arguments":{"task":"x","cwd":"/"}}`, false, `Invalid arguments for flow_run: unknown arguments: [cwd] (accepted: [idempotency_key, task, wait_seconds]); expected ` + runUsage},
		{"extra argv argument", `{"name":"flow_check","arguments":{"argv":["sh","-c","id"]}}`, false, `Invalid arguments for flow_check: unknown arguments: [argv] (accepted: [name]); expected {"name"?: string}`},
		{"array arguments", `{"name":"flow_run","arguments":["x"]}`, true, "Invalid params: the arguments of flow_run must be a JSON object, got an array"},
		{"non-string task", `{"name":"flow_run","arguments":{"task":42}}`, false, `Invalid arguments for flow_run: argument "task" must be a string, got an integer; expected ` + runUsage},
		{"missing task", `{"name":"flow_run","arguments":{}}`, false, `Invalid arguments for flow_run: missing arguments: [task]; expected ` + runUsage},
		{"extra cwd param", `{"name":"flow_run","arguments":{"task":"x"},"cwd":"/"}`, true, `Unknown tools/call parameters: "cwd"`},
		{"task param (MCP tasks are not supported)", `{"name":"flow_run","arguments":{"task":"x"},"task":{"ttl":1}}`, true, `Unknown tools/call parameters: "task"`},
		{"missing name", `{"arguments":{}}`, true, "tools/call needs params.name, the name of a tool: flow_run, flow_status, flow_check or flow_review"},
		{"non-string name", `{"name":["flow_status"]}`, true, "tools/call needs params.name, the name of a tool: flow_run, flow_status, flow_check or flow_review"},
		{"no params", ``, true, "tools/call needs params.name, the name of a tool: flow_run, flow_status, flow_check or flow_review"},
		{"null arguments", `{"name":"flow_status","arguments":null}`, true, "Invalid params: the arguments of flow_status must be a JSON object, got null"},
		{"empty task", `{"name":"flow_run","arguments":{"task":""}}`, false, `Invalid arguments for flow_run: argument "task" must not be empty; expected ` + runUsage},
		{"missing and unknown", `{"name":"flow_run","arguments":{"b":1,"a":2}}`, false, `Invalid arguments for flow_run: missing arguments: [task]; unknown arguments: [a, b] (accepted: [idempotency_key, task, wait_seconds]); expected ` + runUsage},
		{"arguments to flow_status", `{"name":"flow_status","arguments":{"verbose":true}}`, false, `Invalid arguments for flow_status: unknown arguments: [verbose] (accepted: [run_id]); expected {"run_id"?: string}`},
		{"non-string name argument", `{"name":"flow_check","arguments":{"name":null}}`, false, `Invalid arguments for flow_check: argument "name" must be a string, got null; expected {"name"?: string}`},
		{"params not an object", `[1]`, true, "Params must be an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &fakeRuntime{}
			c := startServer(t, rt)
			c.handshake()
			line := `{"jsonrpc":"2.0","id":7,"method":"tools/call"}`
			if tc.params != "" {
				line = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + tc.params + `}`
			}
			c.send(line)
			var want []byte
			if tc.protocol {
				want, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "error": map[string]any{"code": -32602, "message": tc.message}})
			} else {
				rep := struct {
					Status   string `json:"status"`
					Verified bool   `json:"verified"`
					Reason   string `json:"reason"`
					Error    string `json:"error"`
				}{"error", false, tc.message, tc.message}
				repJSON, _ := report.Marshal(rep)
				want, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "result": map[string]any{
					"content": []any{
						map[string]any{"type": "text", "text": tc.message},
						map[string]any{"type": "text", "text": string(repJSON)},
					},
					"structuredContent": rep,
					"isError":           true,
				}})
			}
			c.expect(string(want))
			runs, checks := rt.calls()
			rt.mu.Lock()
			statuses := rt.statuses
			rt.mu.Unlock()
			if len(runs)+len(checks)+statuses > 0 {
				t.Errorf("the runtime was called: runs %q checks %q statuses %d", runs, checks, statuses)
			}
		})
	}
}

// TestToolArguments: each tool's arguments are decoded into its argument
// struct, or refused before dispatch with a message that names the key and
// what was expected. A nil raw stands for absent arguments.
func TestToolArguments(t *testing.T) {
	zero, three, huge := 0, 3, 2147483647
	empty, r1 := "", "r1"
	for _, tc := range []struct {
		name, tool string
		raw        json.RawMessage
		want       any    // the decoded argument struct, when err is ""
		err        string // the whole message: -32602 for arguments that are not an object, else the isError result's
	}{
		{"task", "flow_run", json.RawMessage(`{"task":"fix it"}`), flowRunArgs{Task: "fix it"}, ""},
		{"every argument", "flow_run", json.RawMessage(`{"task":"x","wait_seconds":3,"idempotency_key":"k"}`), flowRunArgs{Task: "x", WaitSeconds: &three, IdempotencyKey: "k"}, ""},
		{"wait_seconds 0 is given", "flow_run", json.RawMessage(`{"task":"x","wait_seconds":0}`), flowRunArgs{Task: "x", WaitSeconds: &zero}, ""},
		{"wait_seconds at its maximum", "flow_run", json.RawMessage(`{"task":"x","wait_seconds":2147483647}`), flowRunArgs{Task: "x", WaitSeconds: &huge}, ""},
		{"missing task", "flow_run", json.RawMessage(`{}`), nil, `Invalid arguments for flow_run: missing arguments: [task]; expected {"task": string, "idempotency_key"?: string, "wait_seconds"?: integer}`},
		{"absent arguments are {}", "flow_run", nil, nil, `Invalid arguments for flow_run: missing arguments: [task]; expected {"task": string, "idempotency_key"?: string, "wait_seconds"?: integer}`},
		{"empty task", "flow_run", json.RawMessage(`{"task":""}`), nil, `Invalid arguments for flow_run: argument "task" must not be empty; expected {"task": string, "idempotency_key"?: string, "wait_seconds"?: integer}`},
		{"task a number", "flow_run", json.RawMessage(`{"task":42}`), nil, `Invalid arguments for flow_run: argument "task" must be a string, got an integer; expected {"task": string, "idempotency_key"?: string, "wait_seconds"?: integer}`},
		{"unknown key", "flow_run", json.RawMessage(`{"task":"x","cwd":"/"}`), nil, `Invalid arguments for flow_run: unknown arguments: [cwd] (accepted: [idempotency_key, task, wait_seconds]); expected {"task": string, "idempotency_key"?: string, "wait_seconds"?: integer}`},
		{"wait_seconds negative", "flow_run", json.RawMessage(`{"task":"x","wait_seconds":-1}`), nil, `Invalid arguments for flow_run: argument "wait_seconds" must be at least 0, got -1; expected {"task": string, "idempotency_key"?: string, "wait_seconds"?: integer}`},
		{"wait_seconds 1.5", "flow_run", json.RawMessage(`{"task":"x","wait_seconds":1.5}`), nil, `Invalid arguments for flow_run: argument "wait_seconds" must be an integer, got the number 1.5; expected {"task": string, "idempotency_key"?: string, "wait_seconds"?: integer}`},
		{"wait_seconds a string", "flow_run", json.RawMessage(`{"task":"x","wait_seconds":"3"}`), nil, `Invalid arguments for flow_run: argument "wait_seconds" must be an integer, got a string; expected {"task": string, "idempotency_key"?: string, "wait_seconds"?: integer}`},
		{"wait_seconds huge", "flow_run", json.RawMessage(`{"task":"x","wait_seconds":2147483648}`), nil, `Invalid arguments for flow_run: argument "wait_seconds" must be at most 2147483647, got 2147483648; expected {"task": string, "idempotency_key"?: string, "wait_seconds"?: integer}`},
		{"wait_seconds beyond 64 bits", "flow_run", json.RawMessage(`{"task":"x","wait_seconds":100000000000000000000}`), nil, `Invalid arguments for flow_run: argument "wait_seconds" must be an integer, got the number 100000000000000000000; expected {"task": string, "idempotency_key"?: string, "wait_seconds"?: integer}`},
		{"idempotency_key a number", "flow_run", json.RawMessage(`{"task":"x","idempotency_key":1}`), nil, `Invalid arguments for flow_run: argument "idempotency_key" must be a string, got an integer; expected {"task": string, "idempotency_key"?: string, "wait_seconds"?: integer}`},
		{"arguments not an object", "flow_run", json.RawMessage(`["x"]`), nil, `Invalid params: the arguments of flow_run must be a JSON object, got an array`},
		{"arguments null", "flow_run", json.RawMessage(`null`), nil, `Invalid params: the arguments of flow_run must be a JSON object, got null`},
		{"status", "flow_status", json.RawMessage(`{}`), flowStatusArgs{}, ""},
		{"status with absent arguments", "flow_status", nil, flowStatusArgs{}, ""},
		{"run_id", "flow_status", json.RawMessage(`{"run_id":"r1"}`), flowStatusArgs{RunID: &r1}, ""},
		{"empty run_id is given", "flow_status", json.RawMessage(`{"run_id":""}`), flowStatusArgs{RunID: &empty}, ""},
		{"run_id a number", "flow_status", json.RawMessage(`{"run_id":7}`), nil, `Invalid arguments for flow_status: argument "run_id" must be a string, got an integer; expected {"run_id"?: string}`},
		{"run_id on flow_run", "flow_run", json.RawMessage(`{"task":"x","run_id":"r1"}`), nil, `Invalid arguments for flow_run: unknown arguments: [run_id] (accepted: [idempotency_key, task, wait_seconds]); expected {"task": string, "idempotency_key"?: string, "wait_seconds"?: integer}`},
		{"status arguments not an object", "flow_status", json.RawMessage(`"x"`), nil, `Invalid params: the arguments of flow_status must be a JSON object, got a string`},
		{"every check", "flow_check", json.RawMessage(`{}`), flowCheckArgs{}, ""},
		{"named check", "flow_check", json.RawMessage(`{"name":"test"}`), flowCheckArgs{Name: "test"}, ""},
		{"name not a string", "flow_check", json.RawMessage(`{"name":["test"]}`), nil, `Invalid arguments for flow_check: argument "name" must be a string, got an array; expected {"name"?: string}`},
		{"task on flow_check", "flow_check", json.RawMessage(`{"task":"x"}`), nil, `Invalid arguments for flow_check: unknown arguments: [task] (accepted: [name]); expected {"name"?: string}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := NewServer(&fakeRuntime{}, Options{})
			bound, invalid, perr := srv.tools.byName[tc.tool].parse(tc.raw)
			if protocol := strings.HasPrefix(tc.err, "Invalid params:"); protocol {
				if perr == nil || perr.code != codeInvalidParams || perr.message != tc.err || invalid != "" {
					t.Fatalf("%s arguments %s: error %v, invalid %q; want -32602 %q", tc.tool, tc.raw, perr, invalid, tc.err)
				}
				return
			}
			if perr != nil {
				t.Fatalf("%s arguments %s: protocol error %v, want none", tc.tool, tc.raw, perr)
			}
			if invalid != tc.err {
				t.Fatalf("%s arguments %s: invalid %q, want %q", tc.tool, tc.raw, invalid, tc.err)
			}
			if tc.err != "" {
				return
			}
			raw := tc.raw
			if raw == nil {
				raw = json.RawMessage(`{}`)
			}
			var got any
			var err error
			switch tc.tool {
			case "flow_run":
				got, err = tools.Parse[flowRunArgs](raw)
			case "flow_status":
				got, err = tools.Parse[flowStatusArgs](raw)
			case "flow_check":
				got, err = tools.Parse[flowCheckArgs](raw)
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s arguments %s decoded (-want +got):\n%s", tc.tool, tc.raw, diff)
			}
			// The session reads wait_seconds and idempotency_key from the call.
			if a, ok := got.(flowRunArgs); ok {
				if !cmp.Equal(bound.wait, a.WaitSeconds) || bound.idempotencyKey != a.IdempotencyKey {
					t.Errorf("flow_run call has wait %v, key %q; want %v, %q", bound.wait, bound.idempotencyKey, a.WaitSeconds, a.IdempotencyKey)
				}
			}
			if (bound.answer != nil) != (tc.tool == "flow_status") || (bound.start != nil) == (tc.tool == "flow_status") {
				t.Errorf("%s call: answer set %v, start set %v; want flow_status answered inline and the others started", tc.tool, bound.answer != nil, bound.start != nil)
			}
		})
	}
}

// TestNotificationNeverExecutes ports a contract test of the reference program: a tools/call
// without id runs nothing and gets no reply.
func TestNotificationNeverExecutes(t *testing.T) {
	rt := &fakeRuntime{}
	c := startServer(t, rt)
	c.handshake()
	c.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"flow_check","arguments":{}}}`)
	c.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"flow_run","arguments":{"task":"x"}}}`)
	c.send(`{"jsonrpc":"2.0","method":"tools/call","params":[1]}`)
	c.send(`{"jsonrpc":"2.0","method":"no/such/notification"}`)
	c.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":"after","result":{}}`)
	if runs, checks := rt.calls(); len(runs)+len(checks) > 0 {
		t.Errorf("notifications executed tools: runs %q checks %q", runs, checks)
	}
}

// TestToolResults: each tool's result is the report as text and as
// structuredContent, isError = status != "ok", and arguments reach the
// runtime (the reference program's contract tests, with a fake runtime).
func TestToolResults(t *testing.T) {
	for _, tc := range []struct {
		name, tool  string
		args        map[string]any
		wantStatus  string
		wantIsError bool
	}{
		{"status", "flow_status", map[string]any{}, "ok", false},
		{"all checks", "flow_check", map[string]any{}, "ok", false},
		{"named check", "flow_check", map[string]any{"name": "test"}, "ok", false},
		{"missing check", "flow_check", map[string]any{"name": "nope"}, "unverified", true},
		{"run", "flow_run", map[string]any{"task": "fix it"}, "ok", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &fakeRuntime{}
			c := startServer(t, rt)
			c.handshake()
			c.send(callLine(1, tc.tool, tc.args, nil))
			m := c.recvMsg()
			res, ok := m["result"].(map[string]any)
			if !ok {
				t.Fatalf("%s reply = %v, want a result", tc.tool, m)
			}
			content := res["content"].([]any)
			sc := res["structuredContent"].(map[string]any)
			want := 1
			if tc.wantIsError {
				// An error result leads with the report's sentence.
				want = 2
				if lead := content[0].(map[string]any)["text"]; lead != sc["reason"] {
					t.Errorf("first text = %q, want the report's reason %q", lead, sc["reason"])
				}
			}
			if len(content) != want || content[want-1].(map[string]any)["type"] != "text" {
				t.Fatalf("content = %v, want %d text items", content, want)
			}
			if diff := jsonDiff(content[want-1].(map[string]any)["text"].(string), mustJSON(t, res["structuredContent"])); diff != "" {
				t.Errorf("text differs from structuredContent (-text +structured):\n%s", diff)
			}
			if sc["status"] != tc.wantStatus || res["isError"] != tc.wantIsError {
				t.Errorf("status %v isError %v, want %s %v", sc["status"], res["isError"], tc.wantStatus, tc.wantIsError)
			}
			runs, checks := rt.calls()
			switch tc.tool {
			case "flow_run":
				if len(runs) != 1 || runs[0] != tc.args["task"] {
					t.Errorf("runtime runs = %q, want [%q]", runs, tc.args["task"])
				}
			case "flow_check":
				name, _ := tc.args["name"].(string)
				if len(checks) != 1 || checks[0] != name {
					t.Errorf("runtime checks = %q, want [%q]", checks, name)
				}
			}
		})
	}
}

// TestRuntimeNonJSONResultKeepsID ports a contract test of the reference program: a report that
// cannot be encoded is -32603 with the request id.
func TestRuntimeNonJSONResultKeepsID(t *testing.T) {
	rt := &fakeRuntime{status: func(context.Context) report.Status {
		return report.Status{Status: "ok", LastReport: math.NaN()}
	}}
	c := startServer(t, rt)
	c.handshake()
	c.send(callLine(4, "flow_status", map[string]any{}, nil))
	m := c.recvMsg()
	if m["id"] != 4.0 || errorCode(m) != -32603 {
		t.Fatalf("reply = %v, want -32603 with id 4", m)
	}
	if msg := m["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "non-JSON") {
		t.Errorf("message = %q, want it to say the runtime returned non-JSON data", msg)
	}
}

// TestRuntimePanicIsInternalError ports a contract test of the reference program: a panicking
// runtime gives -32603 with the id preserved, and the session goes on.
func TestRuntimePanicIsInternalError(t *testing.T) {
	rt := &fakeRuntime{check: func(context.Context, string) report.CheckReport { panic("boom") }}
	c := startServer(t, rt)
	c.handshake()
	c.send(callLine("p", "flow_check", map[string]any{}, nil))
	m := c.recvMsg()
	if m["id"] != "p" || errorCode(m) != -32603 {
		t.Fatalf("reply = %v, want -32603 with id \"p\"", m)
	}
	// The slot was released: another check runs.
	rt.mu.Lock()
	rt.check = nil
	rt.mu.Unlock()
	c.send(callLine("q", "flow_check", map[string]any{}, nil))
	if m := c.recvMsg(); m["id"] != "q" || m["result"] == nil {
		t.Fatalf("reply after a panic = %v, want a result", m)
	}
}

// TestOversizedReportIsCut: a report over the reply limit keeps its status,
// verdict and small members and says what was dropped.
func TestOversizedReportIsCut(t *testing.T) {
	big := strings.Repeat("y", maxReportBytes)
	rt := &fakeRuntime{check: func(context.Context, string) report.CheckReport {
		return report.CheckReport{Status: "failed", Reason: "r", Checks: []report.CheckResult{{Name: "t", Stdout: big}}}
	}}
	c := startServer(t, rt)
	c.handshake()
	c.send(callLine(1, "flow_check", map[string]any{}, nil))
	line := c.recv()
	if len(line) > 2*maxReportBytes {
		t.Fatalf("reply is %d bytes, want it cut below %d", len(line), 2*maxReportBytes)
	}
	var m struct {
		Result struct {
			StructuredContent map[string]any `json:"structuredContent"`
			IsError           bool           `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	sc := m.Result.StructuredContent
	if sc["status"] != "failed" || sc["verified"] != false || sc["reason"] != "r" || sc["checks"] != nil || !m.Result.IsError {
		t.Errorf("cut report = %v isError %v, want status, verified and reason kept, checks dropped", sc, m.Result.IsError)
	}
	if note, _ := sc["report_truncated"].(string); !strings.Contains(note, `"checks"`) {
		t.Errorf("report_truncated = %q, want it to name the dropped checks", note)
	}
}
