package tui

import (
	"errors"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"flow/runtime/report"
)

// reviewFake is a fake whose last run changed two hunks of calc.go and one
// of util.go.
func reviewFake() *fakeRuntime {
	rt := newFake()
	ev := report.HunkEvidence{Shows: "none", Sentence: "No check shows this file's change; review it yourself."}
	rt.hunks = []report.Hunk{
		{ID: "aaaaaaaaaa", Path: "calc.go", OldStart: 3, OldLines: 1, NewStart: 3, NewLines: 1, State: report.HunkPending, Evidence: ev, Text: "@@ -3,1 +3,1 @@\n-\treturn a - b\n+\treturn a + b\n"},
		{ID: "bbbbbbbbbb", Path: "calc.go", OldStart: 9, OldLines: 1, NewStart: 9, NewLines: 1, State: report.HunkPending, Evidence: ev, Text: "@@ -9,1 +9,1 @@\n-\treturn 0\n+\treturn 1\n"},
		{ID: "cccccccccc", Path: "util.go", OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 2, State: report.HunkPending, Evidence: ev, Text: "@@ -1,1 +1,2 @@\n package util\n+// x\n"},
	}
	return rt
}

// key presses one printable key and settles what follows.
func key(t *testing.T, m *ui, r rune) {
	t.Helper()
	settle(t, m, press(m, tea.KeyPressMsg{Code: r, Text: string(r)}))
}

// The walk shows each pending hunk with its evidence and applies each key
// at once: n reverts, d reverts the rest of the file without asking, y
// keeps; the hint line names the keys while the walk waits.
func TestReviewWalk(t *testing.T) {
	rt := reviewFake()
	m := newTestUI(t, rt, testOptions)
	settle(t, m, submit(m, "/review"))
	got := screen(m)
	assertContains(t, got,
		"review ok · run run-1 · 3 hunks",
		"pending   aaaaaaaaaa calc.go -3,1 +3,1 · none",
		"hunk 1/3 · calc.go · aaaaaaaaaa",
		"No check shows this file's change",
		"+    return a + b",
		"keep this hunk? [y,n,a,d,q,?]",
		"y keep · n revert · a keep file · d revert file · q stop · ? help",
	)
	key(t, m, '?')
	assertContains(t, screen(m), "d  revert this hunk and the rest of this file's")
	key(t, m, 'd') // reverts aaaaaaaaaa and then bbbbbbbbbb without asking
	got = logText(m)
	assertContains(t, got, "reverted aaaaaaaaaa (calc.go)", "reverted bbbbbbbbbb (calc.go)", "hunk 3/3 · util.go · cccccccccc")
	assertLacks(t, got, "hunk 2/3")
	key(t, m, 'y')
	assertContains(t, logText(m), "kept cccccccccc (util.go)", "review done · 3 decisions")
	if want := []string{"revert aaaaaaaaaa", "revert bbbbbbbbbb", "keep cccccccccc"}; !slices.Equal(rt.decisions, want) {
		t.Errorf("decisions = %q, want %q", rt.decisions, want)
	}
	if m.review != nil {
		t.Error("the walk is still waiting after its last hunk")
	}
	// Keys go to the input line again.
	typeText(m, "y")
	if m.input.Value() != "y" {
		t.Errorf("input = %q after the walk, want the typed key", m.input.Value())
	}
}

// q stops with the rest pending; a refused revert is named with its
// reason and the walk goes on; a review that cannot be made is one error
// line and no walk.
func TestReviewStopsAndRefuses(t *testing.T) {
	rt := reviewFake()
	rt.conflicts = map[string]bool{"aaaaaaaaaa": true}
	m := newTestUI(t, rt, testOptions)
	settle(t, m, submit(m, "/review"))
	key(t, m, 'n')
	assertContains(t, logText(m), "aaaaaaaaaa not reverted: its lines changed since the run", "hunk 2/3")
	key(t, m, 'q')
	assertContains(t, logText(m), "review stopped · 2 hunks stay pending (/review goes on)")
	if m.review != nil {
		t.Error("q left the walk waiting")
	}
	if rt.hunks[0].State != report.HunkPending || rt.hunks[1].State != report.HunkPending {
		t.Errorf("states = %s, %s; want both pending", rt.hunks[0].State, rt.hunks[1].State)
	}

	bad := newFake()
	bad.reviewErr = errors.New("workspace /work/demo has no run to review")
	m = newTestUI(t, bad, testOptions)
	settle(t, m, submit(m, "/review"))
	assertContains(t, logText(m), "review: workspace /work/demo has no run to review")
	if m.review != nil {
		t.Error("a failed review began a walk")
	}
	settle(t, m, submit(m, "/review keep"))
	assertContains(t, logText(m), msgReviewUsage)
}

// `/review revert ID` decides without a walk; a run not verified with a
// change ends with the offer of the review.
func TestReviewDirectAndOffer(t *testing.T) {
	rt := reviewFake()
	m := newTestUI(t, rt, testOptions)
	settle(t, m, submit(m, "/review revert bbbbbbbbbb run-9"))
	assertContains(t, logText(m), "review ok · run run-9 · 3 hunks", "reverted  bbbbbbbbbb calc.go")
	if m.review != nil {
		t.Error("a direct decision began a walk")
	}
	rt.report = report.Run{Status: "ok", RunID: "r-1", ChangedFiles: []string{"calc.go"}, Reason: "No check shows the change."}
	settle(t, m, submit(m, "fix it"))
	assertContains(t, logText(m), "next  "+msgReviewOffer)
	rt.report.Verified = true
	settle(t, m, submit(m, "/clear"))
	settle(t, m, submit(m, "fix it again"))
	assertLacks(t, logText(m), msgReviewOffer)
}

// The line mode answers /review with the review report as one JSON line.
func TestReviewLineMode(t *testing.T) {
	rt := reviewFake()
	var out strings.Builder
	code := runLines(t.Context(), rt, strings.NewReader("/review keep all\n/review revert cccccccccc\n/review a b c d\n"), &out)
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d answers, want 3:\n%s", len(lines), out.String())
	}
	assertContains(t, lines[1], `"status":"ok"`, `"run_id":"run-1"`, `"id":"cccccccccc"`, `"state":"reverted"`)
	assertContains(t, lines[2], `"status":"error"`, "Usage: /review")
}
