package measure

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"flow/internal/test/ollamatest"
	"flow/runtime/agent"
	"flow/runtime/config"
	"flow/runtime/model/ollama"
	"flow/runtime/report"
)

// verdict is a reviewer's answer.
func verdict(approved bool, issue string) ollamatest.Turn {
	b, _ := json.Marshal(map[string]any{"approved": approved, "summary": issue, "issues": []string{issue}})
	return ollamatest.Turn{Content: string(b)}
}

// measureWith runs the embedded cases against a scripted reviewer server
// whose answers answer(c) gives in case order, and returns the figures,
// the results and the server.
func measureWith(t *testing.T, answer func(c Case) ollamatest.Turn) (report.ReviewerMeasured, []Result, *ollamatest.Server) {
	t.Helper()
	cases, err := Cases()
	if err != nil {
		t.Fatal(err)
	}
	srv := ollamatest.New(t)
	srv.SetModels("reviewer:1b")
	srv.SetCapabilities("reviewer:1b", "completion", "tools")
	for _, c := range cases {
		srv.Enqueue(answer(c))
	}
	cfg := config.Default()
	cfg.Ollama.BaseURL, cfg.Ollama.Model = srv.URL, "reviewer:1b"
	client, err := ollama.New(ollama.Options{BaseURL: srv.URL, API: cfg.Ollama.API, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	m, results, err := Run(context.Background(), Options{Config: &cfg, Reviewer: client, Scratch: t.TempDir(),
		Progress: func(i, n int, c Case, r *Result) {
			if r != nil {
				lines = append(lines, c.ID()+" "+r.Verdict)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != len(cases) || len(results) != len(cases) {
		t.Fatalf("progress %d lines, %d results, want %d", len(lines), len(results), len(cases))
	}
	for _, r := range results {
		if !r.Judged {
			t.Errorf("%s not judged: %s", r.Case, r.NotJudged)
		}
	}
	if n := srv.Pending(); n != 0 || srv.Unexpected() != 0 {
		t.Errorf("the reviewer's server: %d turns left, %d unexpected requests; want one reviewer call a case", n, srv.Unexpected())
	}
	return m, results, srv
}

func TestMeasureApproveAll(t *testing.T) {
	m, _, srv := measureWith(t, func(Case) ollamatest.Turn { return verdict(true, "Looks right.") })
	if m.Discriminates || m.TrustPct != 0 || m.ApprovalPct != 100 || m.Judged != m.Cases {
		t.Errorf("approve-all measured %+v, want trust 0%%, approval 100%%, not discriminating", m)
	}
	if !strings.Contains(m.Sentence, "does not tell right from wrong") || !strings.Contains(m.Sentence, "0% + 100% = 100%") {
		t.Errorf("sentence %q", m.Sentence)
	}
	// Every request went to the reviewer's server as the reviewer: the
	// case's diff is in it, and no coder or planner call came here.
	for _, r := range srv.Chats() {
		if !strings.Contains(string(r.Raw), "Your role now: the reviewer") || !strings.Contains(string(r.Raw), "diffs") {
			t.Fatalf("a request that is not the reviewer's with the change: %.300s", r.Raw)
		}
	}
}

func TestMeasureByTruth(t *testing.T) {
	m, results, _ := measureWith(t, func(c Case) ollamatest.Turn {
		return verdict(c.Label == LabelCorrect, c.Why)
	})
	if !m.Discriminates || m.TrustPct != 100 || m.ApprovalPct != 100 || m.Wrong == 0 || m.Correct == 0 {
		t.Errorf("by-truth measured %+v, want trust and approval 100%%, discriminating", m)
	}
	if !strings.HasPrefix(m.Sentence, "The reviewer tells right from wrong") {
		t.Errorf("sentence %q", m.Sentence)
	}
	for _, r := range results {
		if !r.Right() {
			t.Errorf("%s: %s, label %s", r.Case, r.Verdict, r.Label)
		}
	}
}

// A server that fails counts nothing: no case is judged, and the
// sentence says too few were.
func TestMeasureServerDown(t *testing.T) {
	cases, _ := Cases()
	cfg := config.Default()
	cfg.Ollama.BaseURL = "http://127.0.0.1:1"
	client, err := ollama.New(ollama.Options{BaseURL: cfg.Ollama.BaseURL, API: cfg.Ollama.API, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m, results, err := Run(context.Background(), Options{Config: &cfg, Reviewer: client, Cases: cases[:2], Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if m.Judged != 0 || m.Discriminates || !strings.HasPrefix(m.Sentence, "Too few cases were judged") {
		t.Errorf("measured %+v", m)
	}
	if results[0].NotJudged == "" {
		t.Errorf("result %+v has no reason", results[0])
	}
}

func TestStoreStanding(t *testing.T) {
	s := Store{Path: filepath.Join(t.TempDir(), "state", StoreFile)}
	cfg := config.Default()
	cfg.Ollama.Model = "m:1b"
	st := s.Standing(&cfg)
	if st.Measured != nil || !strings.Contains(st.Note, "not measured") || st.Model != "m:1b" || st.Server != "ollama" || st.Prompt == "" {
		t.Fatalf("standing before a measurement: %+v", st)
	}
	m := Summarize([]Result{{Label: LabelWrong, Judged: true, Verdict: VerdictApproved}, {Label: LabelCorrect, Judged: true, Verdict: VerdictApproved}}, cfg.Ollama.BaseURL, time.Unix(0, 0))
	temp := cfg.Ollama.Temperature
	if err := s.Save(Record{BaseURL: cfg.Ollama.BaseURL, Model: "m:1b", Prompt: st.Prompt, Temperature: &temp, Measured: m}); err != nil {
		t.Fatal(err)
	}
	// A second save of the same four replaces the first.
	if err := s.Save(Record{BaseURL: cfg.Ollama.BaseURL, Model: "m:1b", Prompt: st.Prompt, Temperature: &temp, Measured: m}); err != nil {
		t.Fatal(err)
	}
	if recs, _ := s.Load(); len(recs) != 1 {
		t.Errorf("%d records, want 1", len(recs))
	}
	st = s.Standing(&cfg)
	if st.Measured == nil || st.Measured.Discriminates || st.Note != m.Sentence {
		t.Errorf("standing after: %+v", st)
	}
	// Another model, or another server, is not measured.
	cfg.Ollama.Model = "m:7b"
	if st := s.Standing(&cfg); st.Measured != nil {
		t.Errorf("another model has %+v", st.Measured)
	}
	cfg.Ollama.Model = "m:1b"
	cfg.Ollama.BaseURL = "http://127.0.0.1:9"
	if st := s.Standing(&cfg); st.Measured != nil {
		t.Errorf("another server has %+v", st.Measured)
	}
}

// TestStoreStandingTemperature: a measurement taken at one sampling
// temperature does not stand for another, nor does one kept before the
// temperature was recorded; the note names both temperatures.
func TestStoreStandingTemperature(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Ollama.Model = "m:1b"
	cfg.Ollama.Temperature = 0
	prompt := agent.ReviewerPromptVersion()
	m := Summarize([]Result{{Label: LabelWrong, Judged: true, Verdict: VerdictRejected}, {Label: LabelCorrect, Judged: true, Verdict: VerdictApproved}}, cfg.Ollama.BaseURL, time.Unix(0, 0))
	hot := 0.2
	s := Store{Path: filepath.Join(dir, "a", StoreFile)}
	if err := s.Save(Record{BaseURL: cfg.Ollama.BaseURL, Model: "m:1b", Prompt: prompt, Temperature: &hot, Measured: m}); err != nil {
		t.Fatal(err)
	}
	st := s.Standing(&cfg)
	if st.Measured != nil || !strings.Contains(st.Note, "not measured at temperature 0") || !strings.Contains(st.Note, "measured at 0.2") {
		t.Errorf("a measurement at 0.2, configured 0: %+v", st)
	}
	cfg.Ollama.Temperature = 0.2
	if st := s.Standing(&cfg); st.Measured == nil || st.Note != m.Sentence {
		t.Errorf("a measurement at 0.2, configured 0.2: %+v", st)
	}
	// A second temperature is kept beside the first, not over it.
	zero := 0.0
	if err := s.Save(Record{BaseURL: cfg.Ollama.BaseURL, Model: "m:1b", Prompt: prompt, Temperature: &zero, Measured: m}); err != nil {
		t.Fatal(err)
	}
	if recs, _ := s.Load(); len(recs) != 2 {
		t.Errorf("%d records after measuring at 0.2 and 0, want 2", len(recs))
	}
	// A file written before the temperature was recorded.
	old := Store{Path: filepath.Join(dir, "b", StoreFile)}
	data := fmt.Sprintf(`[{"base_url": %q, "model": "m:1b", "prompt": %q, "server": "ollama", "measured": {"sentence": "x"}}]`, cfg.Ollama.BaseURL, prompt)
	if err := os.MkdirAll(filepath.Dir(old.Path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old.Path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if st := old.Standing(&cfg); st.Measured != nil || !strings.Contains(st.Note, "did not record") {
		t.Errorf("a record without a temperature: %+v", st)
	}
	// Measured again, the new record takes its place.
	if err := old.Save(Record{BaseURL: cfg.Ollama.BaseURL, Model: "m:1b", Prompt: prompt, Temperature: &hot, Measured: m}); err != nil {
		t.Fatal(err)
	}
	if recs, _ := old.Load(); len(recs) != 1 || recs[0].Temperature == nil {
		t.Errorf("after measuring again: %+v, want the one record at 0.2", recs)
	}
	if st := old.Standing(&cfg); st.Measured == nil {
		t.Errorf("measured again at 0.2, configured 0.2: %+v", st)
	}
}
