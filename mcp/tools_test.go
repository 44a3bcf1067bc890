package mcp

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"flow/runtime/report"
)

// TestToolCallRejections is reference §18.4 item 5 (the 7 injection cases)
// plus the other tools/call parameter errors: every one is -32602 and none
// reaches the runtime.
func TestToolCallRejections(t *testing.T) {
	for _, tc := range []struct {
		name, params, message string
	}{
		{"unknown tool", `{"name":"shell_exec","arguments":{"cmd":"rm -rf /"}}`, "Unknown Flow tool; the tools are flow_run, flow_status and flow_check"},
		{"extra cwd argument", `{"name":"flow_run","arguments":{"task":"x","cwd":"/"}}`, `Invalid arguments for flow_run: unknown "cwd"`},
		{"extra argv argument", `{"name":"flow_check","arguments":{"argv":["sh","-c","id"]}}`, `Invalid arguments for flow_check: unknown "argv"`},
		{"array arguments", `{"name":"flow_run","arguments":["x"]}`, "Invalid arguments for flow_run: expected an object"},
		{"non-string task", `{"name":"flow_run","arguments":{"task":42}}`, `Invalid arguments for flow_run: "task" must be a string`},
		{"missing task", `{"name":"flow_run","arguments":{}}`, `Invalid arguments for flow_run: missing "task"`},
		{"extra cwd param", `{"name":"flow_run","arguments":{"task":"x"},"cwd":"/"}`, `Unknown tools/call parameters: "cwd"`},
		{"task param (MCP tasks are not supported)", `{"name":"flow_run","arguments":{"task":"x"},"task":{"ttl":1}}`, `Unknown tools/call parameters: "task"`},
		{"missing name", `{"arguments":{}}`, "Unknown Flow tool; the tools are flow_run, flow_status and flow_check"},
		{"non-string name", `{"name":["flow_status"]}`, "Unknown Flow tool; the tools are flow_run, flow_status and flow_check"},
		{"no params", ``, "Unknown Flow tool; the tools are flow_run, flow_status and flow_check"},
		{"null arguments", `{"name":"flow_status","arguments":null}`, "Invalid arguments for flow_status: expected an object"},
		{"empty task", `{"name":"flow_run","arguments":{"task":""}}`, `Invalid arguments for flow_run: "task" must not be empty`},
		{"missing and unknown", `{"name":"flow_run","arguments":{"b":1,"a":2}}`, `Invalid arguments for flow_run: missing "task"; unknown "a", "b"`},
		{"arguments to flow_status", `{"name":"flow_status","arguments":{"verbose":true}}`, `Invalid arguments for flow_status: unknown "verbose"`},
		{"non-string name argument", `{"name":"flow_check","arguments":{"name":null}}`, `Invalid arguments for flow_check: "name" must be a string`},
		{"params not an object", `[1]`, "Params must be an object"},
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
			want, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "error": map[string]any{"code": -32602, "message": tc.message}})
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

// TestNotificationNeverExecutes is reference §18.4 item 6: a tools/call
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
// runtime (reference §18.4 item 7 with a fake runtime).
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

// TestRuntimeNonJSONResultKeepsID is reference §18.5 item 6: a report that
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

// TestRuntimePanicIsInternalError is reference §18.5 item 4: a panicking
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
