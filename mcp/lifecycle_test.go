package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const initParams = `"capabilities":{},"clientInfo":{"name":"test","version":"1"}`

// TestSessionIdsStatusListPingAndCleanEOF ports the reference program's MCP session contract test, in
// process: ids echoed in order, the negotiated version, exactly the three
// tools, status text JSON equal to structuredContent, isError false, EOF → nil.
func TestSessionIdsStatusListPingAndCleanEOF(t *testing.T) {
	rt := &fakeRuntime{}
	c := startServer(t, rt)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` + initParams + `}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	c.send(callLine(3, "flow_status", map[string]any{}, nil))
	c.send(`{"jsonrpc":"2.0","id":"four","method":"ping"}`)
	if err := c.closeInput(); err != nil {
		t.Fatalf("Serve = %v, want nil at EOF", err)
	}
	lines := c.rest()
	if len(lines) != 4 {
		t.Fatalf("got %d replies, want 4:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	var replies []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("non-JSON line %q", l)
		}
		replies = append(replies, m)
	}
	for i, want := range []any{1.0, 2.0, 3.0, "four"} {
		if replies[i]["id"] != want {
			t.Errorf("reply %d id = %v, want %v", i, replies[i]["id"], want)
		}
	}
	init := replies[0]["result"].(map[string]any)
	if init["protocolVersion"] != "2025-06-18" {
		t.Errorf("protocolVersion = %v, want 2025-06-18", init["protocolVersion"])
	}
	if diff := jsonDiff(`{"tools":{}}`, mustJSON(t, init["capabilities"])); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	if diff := jsonDiff(`{"name":"flow","version":"test"}`, mustJSON(t, init["serverInfo"])); diff != "" {
		t.Errorf("serverInfo (-want +got):\n%s", diff)
	}
	if init["instructions"] != Instructions() || !strings.Contains(Instructions(), "verified") {
		t.Errorf("instructions = %q, want the embedded instructions.md", init["instructions"])
	}
	var names []string
	for _, tool := range replies[1]["result"].(map[string]any)["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	if got, want := strings.Join(names, ","), "flow_run,flow_status,flow_check,flow_review"; got != want {
		t.Errorf("tools/list names = %s, want %s", got, want)
	}
	res := replies[2]["result"].(map[string]any)
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	if diff := jsonDiff(text, mustJSON(t, res["structuredContent"])); diff != "" {
		t.Errorf("status text differs from structuredContent (-text +structured):\n%s", diff)
	}
	if res["isError"] != false {
		t.Errorf("isError = %v, want false (present)", res["isError"])
	}
	sc := res["structuredContent"].(map[string]any)
	if sc["workspace"] != "/ws" || sc["backend"].(map[string]any)["connectivity"] != "unverified" {
		t.Errorf("structuredContent = %v, want the fake's status report", sc)
	}
	if diff := jsonDiff(`{"jsonrpc":"2.0","id":"four","result":{}}`, lines[3]); diff != "" {
		t.Errorf("ping reply (-want +got):\n%s", diff)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestVersionNegotiation: the three supported versions are echoed, any
// other string gets 2025-11-25 (doc/design.md §10.3).
func TestVersionNegotiation(t *testing.T) {
	for _, tc := range []struct{ requested, want string }{
		{"2025-11-25", "2025-11-25"},
		{"2025-06-18", "2025-06-18"},
		{"2025-03-26", "2025-03-26"},
		{"2024-11-05", "2025-11-25"},
		{"2099-01-01", "2025-11-25"},
		{"2026-07-28", "2025-11-25"},
		{"not a date", "2025-11-25"},
	} {
		t.Run(tc.requested, func(t *testing.T) {
			c := startServer(t, &fakeRuntime{})
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,%s}}`, tc.requested, initParams))
			m := c.recvMsg()
			got, _ := m["result"].(map[string]any)["protocolVersion"].(string)
			if got != tc.want {
				t.Errorf("initialize(%q) protocolVersion = %q, want %q", tc.requested, got, tc.want)
			}
		})
	}
}

// TestLifecycleErrors ports the reference program's lifecycle contract tests, plus
// the requests that are served before initialize (ping) and the ones that
// are not.
func TestLifecycleErrors(t *testing.T) {
	c := startServer(t, &fakeRuntime{})
	steps := []struct{ send, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Initialize and send notifications/initialized first"}}`},
		{`{"jsonrpc":"2.0","id":2,"method":"no/such"}`,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"Initialize and send notifications/initialized first"}}`},
		{`{"jsonrpc":"2.0","id":3,"method":"server/discover"}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"Initialize and send notifications/initialized first"}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"ping"}`, `{"jsonrpc":"2.0","id":4,"result":{}}`},
		{`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`,
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Initialize requires capabilities and clientInfo"}}`},
		{`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"x","version":"1"}}}`,
			`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Initialize requires capabilities and clientInfo"}}`},
		{`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x"}}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Initialize requires capabilities and clientInfo"}}`},
		{`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":[],` + initParams + `}}`,
			`{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"protocolVersion must be a nonempty string"}}`},
		{`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"",` + initParams + `}}`,
			`{"jsonrpc":"2.0","id":10,"error":{"code":-32602,"message":"protocolVersion must be a nonempty string"}}`},
		{`{"jsonrpc":"2.0","id":11,"method":"initialize"}`,
			`{"jsonrpc":"2.0","id":11,"error":{"code":-32602,"message":"protocolVersion must be a nonempty string"}}`},
		// A notifications/initialized before initialize does not make the session ready.
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ``},
		{`{"jsonrpc":"2.0","id":12,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":12,"error":{"code":-32002,"message":"Initialize and send notifications/initialized first"}}`},
		{`{"jsonrpc":"2.0","id":13,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":true},"clientInfo":{"name":"x","version":"1","title":"X"}}}`, `*`},
		// Initialized but not yet ready.
		{`{"jsonrpc":"2.0","id":14,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":14,"error":{"code":-32002,"message":"Initialize and send notifications/initialized first"}}`},
		{`{"jsonrpc":"2.0","id":15,"method":"initialize","params":{"protocolVersion":"2025-11-25",` + initParams + `}}`,
			`{"jsonrpc":"2.0","id":15,"error":{"code":-32600,"message":"Already initialized"}}`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ``},
		{`{"jsonrpc":"2.0","id":16,"method":"initialize","params":{"protocolVersion":"2025-11-25",` + initParams + `}}`,
			`{"jsonrpc":"2.0","id":16,"error":{"code":-32600,"message":"Already initialized"}}`},
		{`{"jsonrpc":"2.0","id":17,"method":"no/such"}`,
			`{"jsonrpc":"2.0","id":17,"error":{"code":-32601,"message":"Method not found: no/such"}}`},
		{`{"jsonrpc":"2.0","id":18,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			`{"jsonrpc":"2.0","id":18,"error":{"code":-32601,"message":"Method not found: server/discover"}}`},
		{`{"jsonrpc":"2.0","id":19,"method":"resources/list"}`,
			`{"jsonrpc":"2.0","id":19,"error":{"code":-32601,"message":"Method not found: resources/list"}}`},
		{`{"jsonrpc":"2.0","id":20,"method":"tasks/list"}`,
			`{"jsonrpc":"2.0","id":20,"error":{"code":-32601,"message":"Method not found: tasks/list"}}`},
		// A modern ping is still a ping.
		{`{"jsonrpc":"2.0","id":21,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			`{"jsonrpc":"2.0","id":21,"result":{}}`},
		{`{"jsonrpc":"2.0","id":22,"method":"tools/list","params":[1]}`,
			`{"jsonrpc":"2.0","id":22,"error":{"code":-32602,"message":"Params must be an object"}}`},
	}
	for _, st := range steps {
		c.send(st.send)
		switch st.want {
		case "":
		case "*":
			if m := c.recvMsg(); m["result"] == nil {
				t.Fatalf("reply to %s = %v, want a result", st.send, m)
			}
		default:
			c.expect(st.want)
		}
	}
	// Nothing else was written: the next reply is the sentinel's.
	c.send(`{"jsonrpc":"2.0","id":"end","method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":"end","result":{}}`)
}
