package check

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/runtime/config"
	"flow/runtime/report"
)

func TestAggregation(t *testing.T) {
	t.Parallel()
	ok, fail := sh("exit 0"), sh("exit 1")
	slow := required("slow", sh("sleep 30")...)
	slow.Timeout = 50
	tests := []struct {
		name     string
		checks   []config.Check
		run      string
		status   string
		verified bool
		statuses []string
		// reason is the report's sentence ("" when verified).
		reason    string
		untrusted bool
	}{
		{name: "no checks", status: report.StatusUnverified, reason: ReasonNoChecks},
		{
			name:   "only optional",
			checks: []config.Check{optional("a", ok...), optional("b", ok...)},
			status: report.StatusUnverified, statuses: []string{"ok", "ok"}, reason: ReasonNoRequired,
		},
		{
			name:   "required fails, optional passes",
			checks: []config.Check{required("a", fail...), optional("b", ok...)},
			status: report.StatusFailed, statuses: []string{"failed", "ok"},
			reason: "The required check a (exit 1) failed; its output says why",
		},
		{
			name:   "optional fails, required passes",
			checks: []config.Check{optional("a", fail...), required("b", ok...)},
			status: report.StatusOK, verified: true, statuses: []string{"failed", "ok"},
		},
		{
			name:   "all pass",
			checks: []config.Check{required("a", ok...), required("b", ok...), optional("c", ok...)},
			status: report.StatusOK, verified: true, statuses: []string{"ok", "ok", "ok"},
		},
		{
			name:   "named optional check is required",
			checks: []config.Check{optional("a", ok...), required("b", fail...)},
			run:    "a", status: report.StatusOK, verified: true, statuses: []string{"ok"},
		},
		{
			name:   "named optional failing check fails",
			checks: []config.Check{optional("a", fail...), required("b", ok...)},
			run:    "a", status: report.StatusFailed, statuses: []string{"failed"},
			reason: "The required check a (exit 1) failed; its output says why",
		},
		{
			name:   "required timeout",
			checks: []config.Check{required("a", ok...), slow},
			status: report.StatusUnverified, statuses: []string{"ok", "timeout"},
			reason: "The required check slow timed out after 50ms; raise [checks.slow] timeout or make it faster",
		},
		{
			name:   "required unavailable",
			checks: []config.Check{required("a", ok...), required("b", "flow-no-such-executable-x9")},
			status: report.StatusUnverified, statuses: []string{"ok", "unavailable"},
			reason: "The check b could not start: flow-no-such-executable-x9 is not installed or not on PATH; install it or change [checks.b] cmd",
		},
		{
			name:   "failure beats timeout",
			checks: []config.Check{slow, required("b", fail...)},
			status: report.StatusFailed, statuses: []string{"timeout", "failed"},
			reason: "The required check b (exit 1) failed; its output says why",
		},
		{
			name:   "two required fail",
			checks: []config.Check{required("a", fail...), required("b", sh("exit 3")...)},
			status: report.StatusFailed, statuses: []string{"failed", "failed"},
			reason: "The required checks a (exit 1) and b (exit 3) failed; their output says why",
		},
		{
			name:   "untrusted",
			checks: []config.Check{required("a", ok...)}, untrusted: true,
			status: report.StatusUnverified, statuses: []string{"unverified"}, reason: ReasonUntrusted,
		},
		{
			name:   "unknown name",
			checks: []config.Check{required("a", ok...), optional("b", ok...)},
			run:    "nope", status: report.StatusUnverified, statuses: []string{"unavailable"},
			reason: `No check named "nope" is configured; the configured checks are a, b`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRunner(t, tc.checks...)
			r.Trusted = !tc.untrusted
			rep := r.Run(t.Context(), tc.run)
			if rep.Status != tc.status || rep.Verified != tc.verified {
				t.Errorf("Run(%q) = %q, verified %v, want %q, %v", tc.run, rep.Status, rep.Verified, tc.status, tc.verified)
			}
			if rep.Reason != tc.reason {
				t.Errorf("Run(%q) reason = %q, want %q", tc.run, rep.Reason, tc.reason)
			}
			if rep.Checks == nil {
				t.Errorf("Run(%q) checks = nil, want a (possibly empty) list", tc.run)
			}
			var got []string
			for _, res := range rep.Checks {
				got = append(got, res.Status)
			}
			if diff := cmp.Diff(tc.statuses, got); diff != "" {
				t.Errorf("Run(%q) result statuses (-want +got):\n%s", tc.run, diff)
			}
		})
	}
}

func TestEmptyReportEncodesEmptyList(t *testing.T) {
	t.Parallel()
	rep := newRunner(t).Run(t.Context(), "")
	b, err := report.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"checks":[]`) {
		t.Errorf("Marshal(empty report) = %s, want \"checks\":[]", b)
	}
}

func TestConfigurationOrder(t *testing.T) {
	t.Parallel()
	names := []string{"c", "a", "b"}
	var checks []config.Check
	for _, n := range names {
		checks = append(checks, optional(n, sh("echo "+n+" >> order.txt")...))
	}
	r := newRunner(t, checks...)
	rep := r.Run(t.Context(), "")
	data, err := os.ReadFile(filepath.Join(r.Root, "order.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), "c\na\nb\n"; got != want {
		t.Errorf("execution order = %q, want %q", got, want)
	}
	var got []string
	for _, res := range rep.Checks {
		got = append(got, res.Name)
	}
	if diff := cmp.Diff(names, got); diff != "" {
		t.Errorf("Run result order (-want +got):\n%s", diff)
	}
}

func TestUntrustedExecutesNothing(t *testing.T) {
	t.Parallel()
	r := newRunner(t, required("a", "touch", "marker"), optional("b", "touch", "marker"))
	r.Trusted = false
	for _, name := range []string{"", "a"} {
		rep := r.Run(t.Context(), name)
		if rep.Status != report.StatusUnverified || rep.Verified {
			t.Errorf("Run(%q) untrusted = %q, verified %v, want unverified, false", name, rep.Status, rep.Verified)
		}
		for _, res := range rep.Checks {
			if res.Status != report.StatusUnverified || res.Error != "Named checks require --trusted" {
				t.Errorf("Run(%q) untrusted result %s = %q, %q, want unverified, %q", name, res.Name, res.Status, res.Error, "Named checks require --trusted")
			}
		}
	}
	if exists(t, filepath.Join(r.Root, "marker")) {
		t.Errorf("an untrusted runner executed a check")
	}
}

func TestUnknownName(t *testing.T) {
	t.Parallel()
	r := newRunner(t, required("a", "true"))
	rep := r.Run(t.Context(), "nope")
	want := []report.CheckResult{{
		Name:      "nope",
		Source:    "flow.check",
		Filetypes: []string{},
		Status:    "unavailable",
		Error:     "No such configured check",
	}}
	if diff := cmp.Diff(want, rep.Checks); diff != "" {
		t.Errorf("Run(nope) checks (-want +got):\n%s", diff)
	}
}

func TestResultCarriesConfiguration(t *testing.T) {
	t.Parallel()
	c := config.Check{
		Name: "lint", Cmd: sh("echo hi"), Timeout: 5000, Required: false,
		Kind: config.KindLint, Filetypes: []string{"go", ".mod"},
	}
	r := newRunner(t, c)
	res := r.Run(t.Context(), "lint").Checks[0]
	zero := 0
	want := report.CheckResult{
		Name: "lint", Source: "flow.check", Cmd: c.Cmd, Timeout: 5000, Required: false,
		Kind: "lint", Filetypes: []string{"go", ".mod"}, Status: "ok", Returncode: &zero,
		Stdout: "hi\n",
	}
	res.DurationMS = 0 // wall time, checked below
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Run(lint) result (-want +got):\n%s", diff)
	}
}

func TestDuration(t *testing.T) {
	t.Parallel()
	r := newRunner(t, required("a", sh("sleep 0.2")...))
	res := r.Run(t.Context(), "").Checks[0]
	if res.DurationMS < 150 {
		t.Errorf("Run(sleep 0.2) duration = %dms, want at least 150ms", res.DurationMS)
	}
}

func TestFreshness(t *testing.T) {
	t.Parallel()
	replaced := errors.New("Workspace root was replaced")
	t.Run("stale before", func(t *testing.T) {
		t.Parallel()
		r := newRunner(t, required("a", sh("touch marker; echo out")...))
		calls := 0
		r.Fresh = func(context.Context) error { calls++; return replaced }
		rep := r.Run(t.Context(), "")
		res := rep.Checks[0]
		if res.Status != report.StatusStale || res.Error != replaced.Error() {
			t.Errorf("Run with stale root = %q, %q, want stale, %q", res.Status, res.Error, replaced)
		}
		if exists(t, filepath.Join(r.Root, "marker")) || res.Stdout != "" || res.DurationMS != 0 {
			t.Errorf("Run with stale root executed the check")
		}
		if rep.Verified || rep.Status != report.StatusUnverified {
			t.Errorf("Run with stale root = %q, verified %v, want unverified, false", rep.Status, rep.Verified)
		}
		if calls != 1 {
			t.Errorf("Fresh called %d times, want 1", calls)
		}
	})
	t.Run("stale after", func(t *testing.T) {
		t.Parallel()
		r := newRunner(t, required("a", sh("echo out")...))
		calls := 0
		r.Fresh = func(context.Context) error {
			calls++
			if calls == 2 {
				return replaced
			}
			return nil
		}
		rep := r.Run(t.Context(), "")
		res := rep.Checks[0]
		if res.Status != report.StatusStale || res.Error != replaced.Error() || res.Returncode != nil {
			t.Errorf("Run with root replaced during the check = %q, %q, returncode %s, want stale, %q, none", res.Status, res.Error, fmtCode(res.Returncode), replaced)
		}
		if res.Stdout != "out\n" {
			t.Errorf("Run with root replaced during the check: stdout = %q, want the output kept", res.Stdout)
		}
		if rep.Verified {
			t.Errorf("Run with root replaced during the check verified")
		}
	})
	t.Run("cancelled while reading the files", func(t *testing.T) {
		// A stop that lands while the files are read is a cancellation,
		// not a stale workspace (it used to say "stale").
		t.Parallel()
		r := newRunner(t, required("a", sh("touch marker")...))
		ctx, cancel := context.WithCancel(t.Context())
		r.Fresh = func(ctx context.Context) error { cancel(); return ctx.Err() }
		res := r.Run(ctx, "").Checks[0]
		if res.Status != report.StatusCancelled || res.Error != msgCancelled {
			t.Errorf("Run cancelled during the freshness check = %q, %q, want cancelled", res.Status, res.Error)
		}
		if exists(t, filepath.Join(r.Root, "marker")) {
			t.Errorf("the cancelled check ran")
		}
	})
	t.Run("fresh", func(t *testing.T) {
		t.Parallel()
		r := newRunner(t, required("a", "true"), required("b", "true"))
		calls := 0
		r.Fresh = func(context.Context) error { calls++; return nil }
		if rep := r.Run(t.Context(), ""); !rep.Verified {
			t.Errorf("Run with fresh root = %q, want verified", rep.Status)
		}
		if calls != 4 {
			t.Errorf("Fresh called %d times for 2 checks, want 4", calls)
		}
	})
}

func TestProgressEvents(t *testing.T) {
	t.Parallel()
	r := newRunner(t, required("a", "true"), optional("b", "false"))
	var events []string
	var ended []report.CheckResult
	r.OnStart = func(c config.Check) { events = append(events, "start "+c.Name) }
	r.OnEnd = func(res report.CheckResult) {
		events = append(events, "end "+res.Name+" "+res.Status)
		ended = append(ended, res)
	}
	rep := r.Run(t.Context(), "")
	want := []string{"start a", "end a ok", "start b", "end b failed"}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(rep.Checks, ended); diff != "" {
		t.Errorf("OnEnd results differ from the report (-report +events):\n%s", diff)
	}
}
