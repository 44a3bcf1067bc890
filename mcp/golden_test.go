package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const goldenFile = "testdata/golden.jsonl"

// goldenRequests is the transcript of testdata/golden.jsonl: the reference
// program's golden wire examples and its framing and lifecycle contract
// cases, in one session against the fake runtime.
var goldenRequests = []string{
	// Before initialize.
	`{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}`,
	`{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}`,
	`{"jsonrpc": "2.0", "id": 15, "method": "ping", "params": {"x": NaN}}`,
	`{"jsonrpc": "2.0", "id": "abc", "method": "ping"}`,
	`not-json`,
	`[]`,
	`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
	`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}`,
	`{"jsonrpc":"1.0","id":3,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":4,"method":7}`,
	``,
	`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`,
	`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":[],"capabilities":{},"clientInfo":{"name":"golden","version":"1"}}}`,
	// Initialize with an unknown version: answered with 2025-11-25.
	`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"golden","version":"1"}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"golden","version":"1"}}}`,
	// Ready.
	`{"jsonrpc":"2.0","id":10,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"flow_status","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"flow_check","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"flow_check","arguments":{"name":"lint"}}}`,
	`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"add a test"},"_meta":{"progressToken":"golden"}}}`,
	`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"shell_exec","arguments":{"cmd":"id"}}}`,
	`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"x","cwd":"/"}}}`,
	`{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"flow_check","arguments":{"argv":["sh"]}}}`,
	`{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"flow_run","arguments":["x"]}}`,
	`{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":1}}}`,
	`{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"flow_run","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":"flow_status","arguments":{},"cwd":"/"}}`,
	`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"flow_check","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":27,"method":"resources/list"}`,
	`{"jsonrpc":"2.0","id":28,"method":"tools/list","params":[]}`,
	`{"jsonrpc":"2.0","id":29,"method":"ping"}`,
	// MCP tasks. TASKID stands for the id of the last task created; ids and
	// task timestamps are normalized in the file.
	`{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"flow_check","arguments":{},"task":{"ttl":60000}}}`,
	`{"jsonrpc":"2.0","id":31,"method":"tasks/result","params":{"taskId":"TASKID"}}`,
	`{"jsonrpc":"2.0","id":32,"method":"tasks/get","params":{"taskId":"TASKID"}}`,
	`{"jsonrpc":"2.0","id":33,"method":"tasks/cancel","params":{"taskId":"TASKID"}}`,
	`{"jsonrpc":"2.0","id":34,"method":"tasks/get","params":{"taskId":"00000000000000000000000000000000"}}`,
	`{"jsonrpc":"2.0","id":35,"method":"tasks/get","params":{}}`,
	`{"jsonrpc":"2.0","id":36,"method":"tasks/list","params":{"cursor":"nope"}}`,
	`{"jsonrpc":"2.0","id":37,"method":"tools/call","params":{"name":"flow_status","arguments":{},"task":{}}}`,
	`{"jsonrpc":"2.0","id":38,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"x"},"task":7}}`,
	`{"jsonrpc":"2.0","id":39,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"x","wait_seconds":-1}}}`,
	`{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"flow_status","arguments":{"run_id":"nope"}}}`,
}

var (
	goldenTaskID   = regexp.MustCompile(`"taskId":"([0-9a-f]{32})"`)
	goldenAnyID    = regexp.MustCompile(`\b[0-9a-f]{32}\b`)
	goldenTaskTime = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`)
)

// normalizeGolden replaces task ids and task timestamps, which change with
// every run.
func normalizeGolden(line json.RawMessage) json.RawMessage {
	b := goldenAnyID.ReplaceAll(line, []byte("TASKID"))
	return goldenTaskTime.ReplaceAll(b, []byte("TIME"))
}

// goldenStep is one request of the transcript and the lines it produced.
type goldenStep struct {
	send string
	recv []json.RawMessage
}

// goldenLine is one line of golden.jsonl: a request sent, or a reply.
type goldenLine struct {
	Send *string         `json:"send,omitempty"`
	Recv json.RawMessage `json:"recv,omitempty"`
}

// TestGoldenTranscript replays goldenRequests and compares every reply, as
// JSON, with testdata/golden.jsonl (regenerate with go test ./mcp -update).
// Each request is followed by a ping whose reply marks the end of what the
// request produced; those pings are not part of the file.
func TestGoldenTranscript(t *testing.T) {
	rt := &fakeRuntime{}
	c, _ := startTaskServer(t, rt, Options{})
	var got []goldenStep
	lastTask := ""
	for i, tmpl := range goldenRequests {
		req := strings.ReplaceAll(tmpl, "TASKID", lastTask)
		c.send(req)
		sync := fmt.Sprintf("golden-sync-%d", i)
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"ping"}`, sync))
		recv := c.collect(sync, awaitedID(req))
		for j, line := range recv {
			if m := goldenTaskID.FindSubmatch(line); m != nil && strings.Contains(tmpl, `"task":{`) {
				lastTask = string(m[1])
			}
			recv[j] = normalizeGolden(line)
		}
		got = append(got, goldenStep{send: tmpl, recv: recv})
	}
	if runs, checks := rt.calls(); len(runs) != 1 || len(checks) != 3 {
		t.Errorf("runtime saw runs %q checks %q, want 1 run and 3 checks", runs, checks)
	}
	if *update {
		writeGolden(t, got)
		return
	}
	want := readGolden(t)
	if len(want) != len(got) {
		t.Fatalf("%s has %d requests, the test sends %d (run go test ./mcp -update)", goldenFile, len(want), len(got))
	}
	for i := range got {
		if want[i].send != got[i].send {
			t.Fatalf("request %d is %s in %s, the test sends %s (run go test ./mcp -update)", i, want[i].send, goldenFile, got[i].send)
		}
		if len(want[i].recv) != len(got[i].recv) {
			t.Errorf("request %s: %d replies, want %d:\n%s", got[i].send, len(got[i].recv), len(want[i].recv), joinRaw(got[i].recv))
			continue
		}
		for j := range got[i].recv {
			if diff := jsonDiff(string(want[i].recv[j]), string(got[i].recv[j])); diff != "" {
				t.Errorf("request %s, reply %d (-want +got):\n%s", got[i].send, j, diff)
			}
		}
	}
}

// awaitedID returns the id of a tools/call or tasks/result request, whose
// reply may come after the sync ping's (flow_run and flow_check run on
// their own goroutine, tasks/result waits on its own); nil otherwise.
func awaitedID(req string) json.RawMessage {
	m, err := parseMessage([]byte(req))
	if err != nil || (m.method != "tools/call" && m.method != "tasks/result" && m.method != "tasks/cancel") || m.id == nil {
		return nil
	}
	return m.id
}

// collect reads lines until the reply to the sync ping and, when awaited is
// set, a reply carrying that id; it returns them without the sync reply.
func (c *client) collect(sync string, awaited json.RawMessage) []json.RawMessage {
	c.t.Helper()
	var out []json.RawMessage
	synced, found := false, awaited == nil
	for !synced || !found {
		line := bytes.TrimSpace(c.recv())
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			c.t.Fatalf("non-JSON line %q", line)
		}
		if string(m.ID) == fmt.Sprintf("%q", sync) {
			synced = true
			continue
		}
		if m.Method == "" && awaited != nil && bytes.Equal(m.ID, awaited) {
			found = true
		}
		out = append(out, slices.Clone(line))
	}
	return out
}

func readGolden(t *testing.T) []goldenStep {
	t.Helper()
	f, err := os.Open(goldenFile)
	if err != nil {
		t.Fatalf("missing golden transcript (run go test ./mcp -update): %v", err)
	}
	defer f.Close()
	var steps []goldenStep
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for n := 1; sc.Scan(); n++ {
		var l goldenLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s:%d: %v", goldenFile, n, err)
		}
		switch {
		case l.Send != nil:
			steps = append(steps, goldenStep{send: *l.Send})
		case l.Recv != nil && len(steps) > 0:
			steps[len(steps)-1].recv = append(steps[len(steps)-1].recv, l.Recv)
		default:
			t.Fatalf("%s:%d: want a send or a recv line after a send", goldenFile, n)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return steps
}

func writeGolden(t *testing.T, steps []goldenStep) {
	t.Helper()
	var buf bytes.Buffer
	for _, st := range steps {
		send := st.send
		b, err := marshal(goldenLine{Send: &send})
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
		for _, r := range st.recv {
			b, err := marshal(goldenLine{Recv: r})
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(append(b, '\n'))
		}
	}
	if err := os.MkdirAll(filepath.Dir(goldenFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goldenFile, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func joinRaw(rs []json.RawMessage) string {
	var b bytes.Buffer
	for _, r := range rs {
		b.Write(r)
		b.WriteByte('\n')
	}
	return b.String()
}
