package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/runtime/report"
)

// TestChainRunsStepsInOrder: chain passes a request through its steps in
// order and then to the last handler; a step that answers stops it there,
// and a step that wraps reply sees what a later step replies.
func TestChainRunsStepsInOrder(t *testing.T) {
	var seen []string
	step := func(name string) callStep {
		return func(rq *toolRequest, next func(*toolRequest)) {
			seen = append(seen, name)
			next(rq)
		}
	}
	last := func(rq *toolRequest) {
		seen = append(seen, "last")
		rq.reply(errorResult("from last"), nil)
	}
	var wrapped []string
	wrap := func(rq *toolRequest, next func(*toolRequest)) {
		inner := rq.reply
		rq.reply = func(res *mcp.CallToolResult, err error) {
			wrapped = append(wrapped, leadSentence(res.RawStructuredContent))
			inner(res, err)
		}
		next(rq)
	}
	replies := 0
	rq := &toolRequest{reply: func(*mcp.CallToolResult, error) { replies++ }}
	chain(last, step("a"), wrap, step("b"))(rq)
	if want := []string{"a", "b", "last"}; !reflect.DeepEqual(seen, want) || replies != 1 {
		t.Fatalf("chain ran %v with %d replies, want %v with 1", seen, replies, want)
	}
	if want := []string{"from last"}; !reflect.DeepEqual(wrapped, want) {
		t.Errorf("the wrapping step saw %v, want %v", wrapped, want)
	}

	seen = nil
	stop := func(rq *toolRequest, _ func(*toolRequest)) { seen = append(seen, "stop") }
	chain(last, step("a"), stop, step("b"))(&toolRequest{})
	if want := []string{"a", "stop"}; !reflect.DeepEqual(seen, want) {
		t.Errorf("a step that answers: chain ran %v, want %v", seen, want)
	}
}

// TestAddedToolPassesTheSteps: a tool added to the table, as the next
// issues add one, is listed after the others, named by the unknown-tool
// error, validated against its argument struct and answered inline, and
// refuses a task; no step names it.
func TestAddedToolPassesTheSteps(t *testing.T) {
	type echoArgs struct {
		Text string `json:"text" min:"1" desc:"What to echo."`
	}
	srv := NewServer(&fakeRuntime{}, Options{Version: "test", Tasks: newTaskStore(t)})
	echo := newTool(toolEnv{}, toolSpec[echoArgs]{
		tool: mcp.Tool{Name: "flow_echo", Annotations: annotations("Echo", true, false, true)},
		answer: func(_ context.Context, a echoArgs) (*mcp.CallToolResult, error) {
			b, err := report.Marshal(map[string]string{"status": report.StatusOK, "text": a.Text})
			return structuredResult(b, false), err
		},
	})
	srv.tools = indexTools(append(srv.tools.list, echo)...)
	c := startSession(t, t.Context(), srv)
	c.handshake()

	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	var list struct {
		Result struct {
			Tools []struct {
				Name      string `json:"name"`
				Execution any    `json:"execution"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(c.recv(), &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Result.Tools {
		names = append(names, tool.Name)
	}
	if want := []string{"flow_run", "flow_status", "flow_check", "flow_review", "flow_echo"}; !reflect.DeepEqual(names, want) || list.Result.Tools[4].Execution != nil {
		t.Fatalf("tools/list = %+v, want %v with no execution for flow_echo", list.Result.Tools, want)
	}

	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool \"nope\"; the tools are flow_run, flow_status, flow_check, flow_review and flow_echo"}}`)

	c.send(callLine(3, "flow_echo", map[string]any{"text": "hi"}, nil))
	c.expect(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\"status\":\"ok\",\"text\":\"hi\"}"}],"structuredContent":{"status":"ok","text":"hi"},"isError":false}}`)

	c.send(callLine(4, "flow_echo", map[string]any{}, nil))
	m := c.recvMsg()
	res, _ := m["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if want := `Invalid arguments for flow_echo: missing arguments: [text]; expected {"text": string}`; res["isError"] != true || sc["reason"] != want {
		t.Errorf("flow_echo without text = %v, want an isError result %q", m, want)
	}

	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"flow_echo","arguments":{"text":"hi"},"task":{}}}`)
	c.expect(`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"flow_echo does not support tasks; call it without the task parameter"}}`)

	if runs, checks := srv.rt.(*fakeRuntime).calls(); len(runs)+len(checks) != 0 {
		t.Errorf("flow_echo reached the runtime: runs %v, checks %v", runs, checks)
	}
}
