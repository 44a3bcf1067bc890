package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"flow/internal/text"
	"flow/runtime/report"
)

// compileSchema compiles an advertised schema with a real JSON Schema
// validator (the one mcp-go uses).
func compileSchema(t *testing.T, name string, raw json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	url := "mem://" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return sch
}

func decodeAny(t *testing.T, raw string) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestArgumentValidationAgreesWithSchema: the pre-dispatch argument check
// accepts exactly what the advertised inputSchema accepts, except integers
// written with a fraction or an exponent (1.0, 1e1): JSON Schema counts
// them as integers, while the check, shared with the model tools, takes an
// integer only when it is written as one.
func TestArgumentValidationAgreesWithSchema(t *testing.T) {
	srv := NewServer(&fakeRuntime{}, Options{})
	samples := []string{
		`{}`, `{"task":"x"}`, `{"task":""}`, `{"task":"é"}`, `{"task":1}`, `{"task":null}`, `{"task":["x"]}`,
		`{"task":"x","cwd":"/"}`, `{"name":"test"}`, `{"name":""}`, `{"name":7}`, `{"argv":[]}`,
		`{"name":"a","task":"b"}`, `[]`, `"x"`, `null`, `{"verbose":true}`,
		`{"run_id":""}`, `{"run_id":7}`, `{"task":"x","idempotency_key":"k"}`, `{"task":"x","idempotency_key":1}`,
		`{"task":"x","wait_seconds":0}`, `{"task":"x","wait_seconds":-0}`, `{"task":"x","wait_seconds":-1}`,
		`{"task":"x","wait_seconds":1.5}`, `{"task":"x","wait_seconds":"3"}`,
		`{"task":"x","wait_seconds":2147483647}`, `{"task":"x","wait_seconds":2147483648}`,
		`{"task":"x","wait_seconds":100000000000000000000}`,
	}
	for _, def := range srv.tools.list {
		name := def.name
		sch := compileSchema(t, name, def.tool.RawInputSchema)
		for _, s := range samples {
			_, invalid, perr := def.parse(json.RawMessage(s))
			gateErr := invalid != "" || perr != nil
			schemaErr := sch.Validate(decodeAny(t, s))
			if gateErr != (schemaErr != nil) {
				t.Errorf("%s arguments %s: gate error %v, schema error %v; want them to agree", name, s, gateErr, schemaErr)
			}
		}
	}
	def := srv.tools.byName["flow_run"]
	sch := compileSchema(t, "flow_run", def.tool.RawInputSchema)
	for _, s := range []string{`{"task":"x","wait_seconds":1.0}`, `{"task":"x","wait_seconds":1e1}`} {
		_, gateErr, _ := def.parse(json.RawMessage(s))
		if schemaErr := sch.Validate(decodeAny(t, s)); gateErr == "" || schemaErr != nil {
			t.Errorf("flow_run arguments %s: gate error %v, schema error %v; want only the gate to refuse them", s, gateErr, schemaErr)
		}
	}
}

// TestResultsMatchOutputSchema: every structuredContent a tool returns
// (reports, busy, a cut-down report) is valid against the outputSchema the
// tool advertises.
func TestResultsMatchOutputSchema(t *testing.T) {
	b := newBlockingRun()
	big := strings.Repeat("z", maxReportBytes)
	rt := &fakeRuntime{run: func(ctx context.Context, task string, progress func(string)) report.Run {
		if task == "block" {
			return b.run(ctx, task, progress)
		}
		return report.Run{Status: report.StatusFailed, Task: task, Summary: big, Error: "reviewer rejected"}
	}}
	c := startServer(t, rt)
	c.handshake()
	c.send(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`)
	var list struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(c.recv(), &list); err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, tool := range list.Result.Tools {
		schemas[tool.Name] = compileSchema(t, tool.Name, tool.OutputSchema)
	}
	check := func(what, tool string) {
		t.Helper()
		line := c.recv()
		var m struct {
			Result struct {
				StructuredContent json.RawMessage `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.Result.StructuredContent == nil {
			t.Fatalf("%s: reply %s has no structuredContent", what, text.Clip(string(line), 200))
		}
		if err := schemas[tool].Validate(decodeAny(t, string(m.Result.StructuredContent))); err != nil {
			t.Errorf("%s: structuredContent does not match %s's outputSchema: %v", what, tool, err)
		}
	}
	c.send(callLine(1, "flow_status", map[string]any{}, nil))
	check("status report", "flow_status")
	c.send(callLine(2, "flow_check", map[string]any{}, nil))
	check("check report", "flow_check")
	c.send(callLine(3, "flow_check", map[string]any{"name": "nope"}, nil))
	check("unverified check report", "flow_check")
	c.send(callLine(4, "flow_run", map[string]any{"task": "big"}, nil))
	check("cut-down run report", "flow_run")
	c.send(callLine(5, "flow_run", map[string]any{"task": "block"}, nil))
	waitFor(t, "the run to start", func() bool { return !slotFree(c.srv) })
	c.send(callLine("busy-run", "flow_run", map[string]any{"task": "x"}, nil))
	check("busy flow_run", "flow_run")
	c.send(callLine("busy-check", "flow_check", map[string]any{}, nil))
	check("busy flow_check", "flow_check")
	close(b.release)
	check("run report", "flow_run")
}
