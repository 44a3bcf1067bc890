package agent

import (
	"slices"
	"strconv"
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/model"
	"flow/runtime/report"
)

// A coder reply that changed no file and called no tool is followed by a
// request sampled at agent.retry_temperature; once the coder has changed a
// file, its requests go back to ollama.temperature, and the other roles
// never leave it (doc/design.md §6.6). Through the real client, on the
// wire; with the retry temperature equal to ollama.temperature, every
// request is sampled alike.
func TestRetryTemperatureAfterIdleReply(t *testing.T) {
	for _, c := range []struct {
		name  string
		retry float64
		want  []float64
	}{
		{"on", 0.8, []float64{0.2, 0.2, 0.8, 0.2, 0.2}},
		{"off", 0.2, []float64{0.2, 0.2, 0.2, 0.2, 0.2}},
		{"below ollama.temperature", 0.1, []float64{0.2, 0.2, 0.2, 0.2, 0.2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
			cfg := testConfig(dir, goLint())
			cfg.Ollama.Temperature = 0.2
			cfg.Agent.RetryTemperature = c.retry
			srv := ollamatest.New(t,
				ollamatest.Turn{Content: "1. Fix a.go."},
				ollamatest.Turn{Content: "The variable is fixed now."},
				ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "c1", Name: "file_edit", Arguments: args(map[string]any{
					"path": "a.go", "old_string": "broken", "new_string": "fixed"})}}},
				ollamatest.Turn{Content: "Changed broken to fixed."},
				ollamatest.Turn{Content: verdict(true, "fixed")},
			)
			rep := newHarness(t, cfg, ollamaBackend(t, srv, cfg)).run(t, "fix a.go")
			if rep.Status != report.StatusOK {
				t.Fatalf("Run() = %s, reason %q, roles %v", rep.Status, rep.Reason, roleStatuses(rep))
			}
			var got []float64
			for _, r := range srv.Requests() {
				if r.Path != "/api/chat" {
					continue // the window's probe
				}
				opts, _ := r.Body["options"].(map[string]any)
				f, _ := opts["temperature"].(float64)
				got = append(got, f)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("temperatures sent = %v, want %v (planner, coder, coder after the reminder, coder after its change, reviewer)", got, c.want)
			}
			var notes []string
			for _, e := range rep.Events {
				if e.Kind == report.EventModelCall && e.Note != "" {
					notes = append(notes, e.Note)
				}
			}
			wantNotes := 0
			if c.retry > cfg.Ollama.Temperature {
				wantNotes = 1
			}
			if len(notes) != wantNotes || wantNotes == 1 && notes[0] != "temperature 0.8: the last reply changed nothing" {
				t.Errorf("model call notes = %q, want %d naming the retry temperature", notes, wantNotes)
			}
		})
	}
}

// When the request after a coder reply that changed nothing is sampled
// hotter, across cycles and in the repair of a failing check, and when it
// is not: after a change whose checks pass, rejected only by the reviewer,
// the host does not know the change is wrong, and a hotter sample broke
// such a correct change in an evaluation run (doc/design.md §6.6).
func TestRetryTemperatureOnlyWhileUnfinished(t *testing.T) {
	edit := func(id, from, to string) step {
		return do(tc(id, "file_edit", map[string]any{"path": "a.go", "old_string": from, "new_string": to}))
	}
	for _, c := range []struct {
		name   string
		steps  []step
		status string
		want   []string // each request's temperature
	}{{
		// The 1.5B coder gave the same reply back across cycles too, though
		// the repair message differs from the first.
		name:   "a cycle that changed nothing hands it on",
		steps:  []step{say("1. Fix a.go."), say("It is fixed."), say("It is fixed, really."), edit("c1", "broken", "fixed"), say("Changed broken to fixed."), say(verdict(true, "fixed"))},
		status: report.StatusOK,
		want:   []string{"client's", "client's", "0.9", "0.9", "client's", "client's"},
	}, {
		name:   "a required check still fails",
		steps:  []step{say("1. Fix a.go."), edit("c1", "broken", "other"), say("Renamed it."), say("It is done."), edit("c2", "other", "fixed"), say("Changed it to fixed."), say(verdict(true, "fixed"))},
		status: report.StatusOK,
		want:   []string{"client's", "client's", "client's", "client's", "0.9", "client's", "client's"},
	}, {
		name:   "not after passing checks and the reviewer's rejection",
		steps:  []step{say("1. Fix a.go."), edit("c1", "broken", "fixed"), say("Changed broken to fixed."), say(verdict(false, "wrong", "not general")), say("The change is right as it is."), say("It is right.")},
		status: report.StatusFailed,
		want:   []string{"client's", "client's", "client's", "client's", "client's", "client's"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
			cfg := testConfig(dir, goLint())
			cfg.Agent.MaxCycles = 2
			cfg.Agent.RetryTemperature = 0.9
			be := newScripted(t, c.steps...)
			rep := newHarness(t, cfg, be).run(t, "fix a.go")
			if rep.Status != c.status || rep.Cycles != 2 {
				t.Fatalf("Run() = %s after %d cycles, reason %q; want %s after 2", rep.Status, rep.Cycles, rep.Reason, c.status)
			}
			var got []string
			for _, r := range be.requests() {
				got = append(got, temperatureOf(r))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("request temperatures = %v, want %v", got, c.want)
			}
		})
	}
}

// temperatureOf is a request's own temperature, or "client's".
func temperatureOf(r model.Request) string {
	if r.Temperature == nil {
		return "client's"
	}
	return strconv.FormatFloat(*r.Temperature, 'g', -1, 64)
}
