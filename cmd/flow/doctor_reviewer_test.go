package main

import (
	"encoding/json"
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/measure"
)

// reviewerServers starts the coder's scripted server (local, with turns)
// and the reviewer's, which answers the embedded cases in their order
// with verdict(c), and writes a configuration that sends the reviewer to
// the second.
func reviewerServers(t *testing.T, ws string, verdict func(c measure.Case) bool, turns ...ollamatest.Turn) (cfg string, local, rev *ollamatest.Server) {
	t.Helper()
	cases, err := measure.Cases()
	if err != nil {
		t.Fatal(err)
	}
	local = ollamatest.New(t, turns...)
	local.SetModels("qwen2.5-coder:7b")
	local.SetCapabilities("qwen2.5-coder:7b", "completion", "tools")
	rev = ollamatest.New(t)
	rev.SetModels("rev:1b")
	rev.SetCapabilities("rev:1b", "completion", "tools")
	for _, c := range cases {
		b, _ := json.Marshal(map[string]any{"approved": verdict(c), "summary": "The change " + c.Label + ".", "issues": []string{}})
		rev.Enqueue(ollamatest.Turn{Content: string(b)})
	}
	cfg = goConfig(t, ws, local.URL, `
[servers.rev]
base_url = `+tomlString(rev.URL)+`
model = "rev:1b"

[roles.reviewer]
server = "rev"
`)
	return cfg, local, rev
}

// TestDoctorReviewerApprovesAll: `flow doctor --reviewer` against a
// scripted reviewer that approves every change says it does not
// discriminate, with the numbers; the measurement is kept, so `flow
// status` shows it, and a run whose reviewer then approves says in its
// reason that the verdict carries little weight. Every measurement
// request went to the reviewer's server.
func TestDoctorReviewerApprovesAll(t *testing.T) {
	t.Parallel()
	ws := calcModule(t)
	env := goEnv(t)
	cfg, local, rev := reviewerServers(t, ws, func(measure.Case) bool { return true },
		ollamatest.Turn{Content: "Plan: make Add add."},
		edit("c1", "return a - b", "return a + b"),
		ollamatest.Turn{Content: "Fixed."},
	)

	r := runFlow(t, ws, env, "doctor", "--reviewer", "--json", "-c", cfg)
	m := decode(t, r)
	if r.code != 0 || m["status"] != "ok" {
		t.Fatalf("flow doctor --reviewer = %d %v\nstderr: %s", r.code, m, r.stderr)
	}
	reviewer := m["reviewer"].(map[string]any)
	measured := reviewer["measured"].(map[string]any)
	if measured["discriminates"] != false || measured["trust_pct"] != 0.0 || measured["approval_pct"] != 100.0 ||
		reviewer["model"] != "rev:1b" || reviewer["server"] != "rev" {
		t.Errorf("reviewer = %v", reviewer)
	}
	sentence, _ := measured["sentence"].(string)
	if !strings.Contains(sentence, "does not tell right from wrong") || !strings.Contains(strings.Join(toStrings(m["warnings"]), "\n"), sentence) {
		t.Errorf("sentence %q not among the warnings %v", sentence, m["warnings"])
	}
	if n := strings.Count(r.stderr, "flow: reviewer case "); n != len(reviewer["results"].([]any)) || n < 12 {
		t.Errorf("%d progress lines for %d cases:\n%s", n, len(reviewer["results"].([]any)), r.stderr)
	}
	if rev.Pending() != 0 || len(local.Chats()) != 0 {
		t.Errorf("reviewer server: %d turns left; coder server: %d chats, want none", rev.Pending(), len(local.Chats()))
	}

	r = runFlow(t, ws, env, "status", "--json", "-c", cfg)
	st := decode(t, r)["reviewer"].(map[string]any)
	if st["measured"] == nil || st["note"] != sentence {
		t.Errorf("status reviewer = %v", st)
	}

	// The measurement's queue is drained; the run's reviewer approves.
	rev.Enqueue(ollamatest.Turn{Content: approve})
	r = runFlow(t, ws, env, "run", "--trusted", "-c", cfg, "fix Add")
	run := decode(t, r)
	if run["status"] != "ok" || run["verified"] != true {
		t.Fatalf("flow run = %d %v\nstderr: %s", r.code, run, r.stderr)
	}
	rr := run["reviewer"].(map[string]any)
	if w, _ := rr["warning"].(string); rr["measured"] == nil || !strings.Contains(w, "The reviewer's verdict carries little weight") {
		t.Errorf("a verified run's reviewer %v does not say the reviewer does not discriminate", rr)
	}
	// The readable summary shows it next to the verdict.
	rev.Enqueue(ollamatest.Turn{Content: approve})
	local.Enqueue(ollamatest.Turn{Content: "Plan: make Add add."}, edit("c2", "return a + b", "return b + a"), ollamatest.Turn{Content: "Swapped."})
	out, code := runFlowTTY(t, ws, env, "run", "--trusted", "--behaviour-preserving", "-c", cfg, "swap Add's operands")
	if code != 0 || !strings.Contains(out, "note:") || !strings.Contains(out, "The reviewer's verdict carries little weight") {
		t.Errorf("the summary (exit %d) lacks the note:\n%s", code, out)
	}
	// So does the readable doctor and status.
	out, _ = runFlowTTY(t, ws, env, "status", "-c", cfg)
	if !strings.Contains(out, "rev:1b: trust 0/7, approval 7/7") || !strings.Contains(out, "does not discriminate") {
		t.Errorf("status on a terminal:\n%s", out)
	}
}

// TestDoctorReviewerByTruth: a reviewer that answers by each case's label
// discriminates, and doctor says so without a warning.
func TestDoctorReviewerByTruth(t *testing.T) {
	t.Parallel()
	ws := calcModule(t)
	cfg, _, _ := reviewerServers(t, ws, func(c measure.Case) bool { return c.Label == measure.LabelCorrect })
	r := runFlow(t, ws, goEnv(t), "doctor", "--reviewer", "--json", "-c", cfg)
	m := decode(t, r)
	measured := m["reviewer"].(map[string]any)["measured"].(map[string]any)
	if r.code != 0 || measured["discriminates"] != true || measured["trust_pct"] != 100.0 || measured["approval_pct"] != 100.0 {
		t.Fatalf("flow doctor --reviewer = %d %v\nstderr: %s", r.code, measured, r.stderr)
	}
	if w := strings.Join(toStrings(m["warnings"]), "\n"); strings.Contains(w, "right from wrong") {
		t.Errorf("warnings %q", w)
	}
	// Without --reviewer, doctor shows the kept measurement.
	r = runFlow(t, ws, goEnv(t), "doctor", "--json", "-c", cfg)
	if st := decode(t, r)["reviewer"].(map[string]any); st["measured"] != nil || !strings.Contains(st["note"].(string), "not measured") {
		t.Errorf("another state directory: reviewer %v, want not measured", st)
	}

	r = runFlow(t, ws, goEnv(t), "status", "--reviewer", "-c", cfg)
	if r.code != 2 || !strings.Contains(r.stderr, "--reviewer is only valid with doctor") {
		t.Errorf("status --reviewer = %d %q", r.code, r.stderr)
	}
}
