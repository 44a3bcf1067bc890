package agent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseVerdict(t *testing.T) {
	tests := []struct {
		name string
		text string
		want *reviewVerdict
	}{
		{"bare", `{"approved":true,"summary":"ok","issues":[]}`, &reviewVerdict{Approved: true, Summary: "ok", Issues: []string{}}},
		{"bare with whitespace", "\n  {\"approved\": false, \"summary\": \"no\", \"issues\": [\"a\", \"b\"]}\n", &reviewVerdict{Summary: "no", Issues: []string{"a", "b"}}},
		{"json fence", "Looks fine.\n```json\n{\"approved\": true, \"summary\": \"s\"}\n```", &reviewVerdict{Approved: true, Summary: "s", Issues: []string{}}},
		{"plain fence", "```\n{\"approved\": false}\n```", &reviewVerdict{Issues: []string{}}},
		{"last object wins", `First thought {"approved": false} but then {"approved": true, "summary": "final"}`, &reviewVerdict{Approved: true, Summary: "final", Issues: []string{}}},
		{"later non-verdict object ignored", `{"approved": true} and an example {"path": "a.go"}`, &reviewVerdict{Approved: true, Issues: []string{}}},
		{"nested approved is not the verdict", `{"approved": false, "detail": {"approved": true}}`, &reviewVerdict{Issues: []string{}}},
		{"braces inside strings", `{"approved": true, "summary": "use {} and \"}\" carefully"}`, &reviewVerdict{Approved: true, Summary: `use {} and "}" carefully`, Issues: []string{}}},
		{"prose braces before verdict", `Map{a: 1} is fine. {"approved": true}`, &reviewVerdict{Approved: true, Issues: []string{}}},
		{"unclosed brace before verdict", `if x { return; {"approved": true}`, &reviewVerdict{Approved: true, Issues: []string{}}},
		{"non-string issues and summary", `{"approved": false, "summary": 3, "issues": [1, {"line": 2}]}`, &reviewVerdict{Summary: "3", Issues: []string{"1", `{"line": 2}`}}},
		{"null issues", `{"approved": true, "issues": null}`, &reviewVerdict{Approved: true, Issues: []string{}}},
		{"prose", "I approve of this change.", nil},
		{"approved not boolean", `{"approved": "true"}`, nil},
		{"approved number", `{"approved": 1}`, nil},
		{"approved missing", `{"summary": "ok"}`, nil},
		{"issues not a list", `{"approved": true, "issues": "none"}`, nil},
		{"truncated json", `{"approved": true, "summary": "x"`, nil},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseVerdict(tc.text)
			if ok != (tc.want != nil) {
				t.Fatalf("parseVerdict(%q) ok = %v, want %v (got %+v)", tc.text, ok, tc.want != nil, got)
			}
			if tc.want != nil {
				if diff := cmp.Diff(*tc.want, got); diff != "" {
					t.Errorf("parseVerdict(%q) (-want +got):\n%s", tc.text, diff)
				}
			}
		})
	}
}

func TestParseVerdictBounds(t *testing.T) {
	long := strings.Repeat("s", 20000)
	v, ok := parseVerdict(`{"approved": true, "summary": "` + long + `"}`)
	if !ok || len(v.Summary) != maxSummaryChars {
		t.Errorf("parseVerdict(long summary) = %v, %d chars, want ok and %d", ok, len(v.Summary), maxSummaryChars)
	}
	// Many unclosed braces followed by a verdict: still found, and cheaply.
	text := strings.Repeat(`{"a":`, 100000) + "\n" + `{"approved": false, "summary": "tail"}`
	v, ok = parseVerdict(text)
	if !ok || v.Approved || v.Summary != "tail" {
		t.Errorf("parseVerdict(pathological) = %+v, %v; want the trailing verdict", v, ok)
	}
}

func TestNormaliseCalls(t *testing.T) {
	in := []struct{ id, name string }{
		{"", "file_list"}, {"x", "file_read"}, {"x", "file_read"}, {"x", "file_list"},
		{"planner-2-3-4", "file_list"}, {"", "file_list"}, {"y", "file_list"},
	}
	var calls []modelCall
	for _, c := range in {
		calls = append(calls, modelCall{ID: c.id, Name: c.name})
	}
	b := normaliseCalls(calls, "planner", 2, 3)
	var ids []string
	for _, c := range b.calls {
		ids = append(ids, c.ID)
	}
	want := []string{"planner-2-3-0", "x", "x#2", "x#3", "planner-2-3-4", "planner-2-3-5", "y"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("normaliseCalls ids (-want +got):\n%s", diff)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("id %q is not unique", id)
		}
		seen[id] = true
	}
	if len(b.duplicate) != 3 || b.duplicate[0] != "" || b.duplicate[1] == "" || b.duplicate[3] == "" {
		t.Errorf("duplicate = %v, want indices 1, 2, 3", b.duplicate)
	}
	// A synthesised id that collides with a model-given one is made unique.
	b = normaliseCalls([]modelCall{{ID: "coder-1-1-1"}, {ID: ""}}, "coder", 1, 1)
	if b.calls[1].ID == "coder-1-1-1" || b.calls[1].ID == "" {
		t.Errorf("synthesised id = %q, want one distinct from coder-1-1-1", b.calls[1].ID)
	}
	if len(b.duplicate) != 0 {
		t.Errorf("duplicate = %v, want none", b.duplicate)
	}
}
