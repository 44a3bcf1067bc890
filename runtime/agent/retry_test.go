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

// A cycle whose coder changed nothing hands the retry temperature on to
// the next cycle's first coder request: the repair message differs from
// the first, but the 1.5B coder gave the same reply back across cycles
// too.
func TestRetryTemperatureCrossesCycles(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	cfg := testConfig(dir, goLint())
	cfg.Agent.MaxCycles = 2
	cfg.Agent.RetryTemperature = 0.9
	be := newScripted(t,
		say("1. Fix a.go."),
		say("It is fixed."),
		say("It is fixed, really."),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
		say("Changed broken to fixed."),
		say(verdict(true, "fixed")),
	)
	rep := newHarness(t, cfg, be).run(t, "fix a.go")
	if rep.Status != report.StatusOK || rep.Cycles != 2 {
		t.Fatalf("Run() = %s after %d cycles, reason %q; want ok after 2", rep.Status, rep.Cycles, rep.Reason)
	}
	var got []string
	for _, r := range be.requests() {
		got = append(got, temperatureOf(r))
	}
	want := []string{"client's", "client's", "0.9", "0.9", "client's", "client's"}
	if !slices.Equal(got, want) {
		t.Errorf("request temperatures = %v, want %v", got, want)
	}
}

func temperatureOf(r model.Request) string {
	if r.Temperature == nil {
		return "client's"
	}
	return strconv.FormatFloat(*r.Temperature, 'g', -1, 64)
}

// A coder that gives back a change whose checks pass, rejected only by the
// reviewer, stays at ollama.temperature: the host does not know that the
// change is wrong, and a hotter sample broke a correct change in an
// evaluation run.
func TestRetryTemperatureNotAfterPassingChecks(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	cfg := testConfig(dir, goLint())
	cfg.Agent.MaxCycles = 2
	cfg.Agent.RetryTemperature = 0.9
	be := newScripted(t,
		say("1. Fix a.go."),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
		say("Changed broken to fixed."),
		say(verdict(false, "wrong", "not general")),
		say("The change is right as it is."),
		say("It is right."),
	)
	rep := newHarness(t, cfg, be).run(t, "fix a.go")
	if rep.Status != report.StatusFailed || rep.Cycles != 2 {
		t.Fatalf("Run() = %s after %d cycles, reason %q; want failed after 2", rep.Status, rep.Cycles, rep.Reason)
	}
	for i, r := range be.requests() {
		if r.Temperature != nil {
			t.Errorf("request %d temperature = %v, want the client's (the checks passed)", i+1, *r.Temperature)
		}
	}
}

// A change whose required check still fails leaves the task unfinished: a
// repair coder that answers without changing anything is asked again at
// the retry temperature.
func TestRetryTemperatureWhileACheckFails(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	cfg := testConfig(dir, goLint())
	cfg.Agent.MaxCycles = 2
	cfg.Agent.RetryTemperature = 0.9
	be := newScripted(t,
		say("1. Fix a.go."),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "other"})),
		say("Renamed it."),
		say("It is done."),
		do(tc("c2", "file_edit", map[string]any{"path": "a.go", "old_string": "other", "new_string": "fixed"})),
		say("Changed it to fixed."),
		say(verdict(true, "fixed")),
	)
	rep := newHarness(t, cfg, be).run(t, "fix a.go")
	if rep.Status != report.StatusOK || rep.Cycles != 2 {
		t.Fatalf("Run() = %s after %d cycles, reason %q; want ok after 2", rep.Status, rep.Cycles, rep.Reason)
	}
	var got []string
	for _, r := range be.requests() {
		got = append(got, temperatureOf(r))
	}
	want := []string{"client's", "client's", "client's", "client's", "0.9", "client's", "client's"}
	if !slices.Equal(got, want) {
		t.Errorf("request temperatures = %v, want %v", got, want)
	}
}
