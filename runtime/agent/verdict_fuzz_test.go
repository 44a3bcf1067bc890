package agent

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzVerdict feeds arbitrary reviewer answers to the verdict parser. It
// must never panic; a verdict it finds must come from a JSON object in the
// answer with a boolean "approved" equal to the verdict's; and an answer
// that is exactly a well-formed verdict object must parse to it.
func FuzzVerdict(f *testing.F) {
	for _, s := range []string{
		`{"approved": true, "summary": "ok", "issues": []}`,
		"The change is fine.\n```json\n{\"approved\": false, \"summary\": \"no\", \"issues\": [\"a\"]}\n```",
		`prose {"approved": "yes"} more {"approved": true, "summary": "s", "issues": ["x"]}`,
		`{"outer": {"approved": true}}`,
		strings.Repeat("{", 2000),
		`{"approved": true, "summary": "` + strings.Repeat("é", 100) + `", "issues": [1, 2]}`,
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		v, ok := parseVerdict(answer)
		if ok {
			want := `"approved":false`
			if v.Approved {
				want = `"approved":true`
			}
			compact := strings.Join(strings.Fields(answer), "")
			if !strings.Contains(compact, want) && !strings.Contains(answer, `\u`) {
				t.Fatalf("verdict approved=%v found in an answer without %s: %q", v.Approved, want, answer)
			}
		}
		// A verdict written alone parses to exactly itself.
		exact, err := json.Marshal(map[string]any{"approved": len(answer)%2 == 0, "summary": answer, "issues": []string{answer}})
		if err != nil {
			t.Fatal(err)
		}
		var back struct{ Summary string }
		if err := json.Unmarshal(exact, &back); err != nil {
			t.Fatal(err)
		}
		got, ok := parseVerdict(string(exact))
		if !ok || got.Approved != (len(answer)%2 == 0) || got.Summary != back.Summary {
			t.Fatalf("parseVerdict(%s) = %+v, %v", exact, got, ok)
		}
	})
}
