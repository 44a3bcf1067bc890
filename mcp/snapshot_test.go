package mcp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestToolSnapshots compares each tool as tools/list sends it (name,
// description, schemas, annotations) with testdata/tools/<tool>.json, so a
// change of what the model sees shows up in review. Regenerate with
// go test ./mcp -update; a missing snapshot fails.
func TestToolSnapshots(t *testing.T) {
	c := startServer(t, &fakeRuntime{})
	c.handshake()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	var reply struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(c.recv(), &reply); err != nil {
		t.Fatal(err)
	}
	// The order of doc/design.md §10.4.
	wantTools := []string{"flow_run", "flow_status", "flow_check", "flow_review"}
	if len(reply.Result.Tools) != len(wantTools) {
		t.Fatalf("tools/list has %d tools, want %d", len(reply.Result.Tools), len(wantTools))
	}
	for i, name := range wantTools {
		t.Run(name, func(t *testing.T) {
			got := reply.Result.Tools[i]
			var tool struct {
				Name        string `json:"name"`
				InputSchema struct {
					AdditionalProperties *bool `json:"additionalProperties"`
				} `json:"inputSchema"`
				Annotations map[string]any `json:"annotations"`
			}
			if err := json.Unmarshal(got, &tool); err != nil {
				t.Fatal(err)
			}
			if tool.Name != name {
				t.Fatalf("tool %d is %q, want %q", i, tool.Name, name)
			}
			if ap := tool.InputSchema.AdditionalProperties; ap == nil || *ap {
				t.Errorf("%s inputSchema.additionalProperties = %v, want false (closed schema)", name, ap)
			}
			for _, hint := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
				if _, ok := tool.Annotations[hint].(bool); !ok {
					t.Errorf("%s annotation %s is not set explicitly", name, hint)
				}
			}
			if tool.Annotations["openWorldHint"] != false {
				t.Errorf("%s openWorldHint = %v, want false", name, tool.Annotations["openWorldHint"])
			}
			file := filepath.Join("testdata", "tools", name+".json")
			if *update {
				var pretty bytes.Buffer
				if err := json.Indent(&pretty, got, "", "  "); err != nil {
					t.Fatal(err)
				}
				pretty.WriteByte('\n')
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("missing snapshot (run go test ./mcp -update): %v", err)
			}
			if diff := jsonDiff(string(want), string(got)); diff != "" {
				t.Errorf("%s differs from %s (-want +got):\n%s", name, file, diff)
			}
		})
	}
}

// TestToolAnnotations pins the honest hints of each tool.
func TestToolAnnotations(t *testing.T) {
	srv := NewServer(&fakeRuntime{}, Options{})
	for _, tc := range []struct {
		name                                       string
		readOnly, destructive, idempotent, openWld bool
	}{
		{"flow_run", false, true, false, false},
		{"flow_status", true, false, true, false},
		{"flow_check", false, false, false, false},
	} {
		a := srv.tools.byName[tc.name].tool.Annotations
		got := [4]bool{*a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint, *a.OpenWorldHint}
		want := [4]bool{tc.readOnly, tc.destructive, tc.idempotent, tc.openWld}
		if got != want {
			t.Errorf("%s hints (readOnly, destructive, idempotent, openWorld) = %v, want %v", tc.name, got, want)
		}
	}
}
