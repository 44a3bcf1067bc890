// Package check runs flow's named checks (doc/design.md §9): the operator-configured
// commands, and only those, that decide whether a workspace is verified.
//
// A check runs its exact argv, never through a shell, with the workspace
// root as working directory, /dev/null as stdin, the inherited environment
// (or only the variables of its `env` allowlist) and its own process group.
// Its output is read through pipes, and only the last [OutputTail] bytes of
// each stream are kept. On timeout or cancellation the group gets SIGTERM and,
// one second later, SIGKILL.
//
// No process outlives a check. However a check ends — its command exits, it
// times out, or its context is cancelled (which is what flow's SIGINT and
// SIGTERM do) — before its result is returned its process group is
// SIGKILLed, and so is every other process it started that is still alive,
// including those that left its process group or session: the process is a
// child subreaper ([BecomeSubreaper]), so such processes are reparented to
// it, and they are found in /proc (children of flow that started after the
// check and are not in flow's own process group, with all their
// descendants), SIGKILLed and reaped, round after round until none is left.
// Where the cgroup v2 hierarchy is writable, each check also runs in a
// cgroup of its own below flow's, which cgroup.kill empties first; it holds
// even a process that moved into flow's own process group. So a check's
// result never waits for an escaped process that holds its pipes. The
// limits: nothing can clean up when flow itself is killed with
// SIGKILL (the direct child gets SIGKILL through PR_SET_PDEATHSIG, but
// processes that left its group are reparented to the next subreaper or
// init and keep running); without a check cgroup, a process that moves into
// flow's own process group is not found, and a process that moves itself to
// another cgroup (which takes privileges) is found only by the scan; when
// the subreaper cannot be set (prctl refused), processes that left the
// group are not found outside the check cgroup; a process flow may not
// signal (a setuid program running as another user) is found but survives. Checks of one process are not
// meant to overlap: a process left behind by one check may be killed when
// another check that ran at the same time ends.
//
// Checks run one after another in configuration order. [Runner.Run]
// aggregates their results into a [report.CheckReport]: the workspace is
// verified only when at least one required check ran and every required
// check passed.
package check

import (
	"context"
	"time"

	"flow/runtime/config"
	"flow/runtime/report"
)

// Messages shared with the reference program (doc/design.md §14.4, §9).
const (
	msgUntrusted = "Named checks require --trusted"
	msgUnknown   = "No such configured check"
	msgCancelled = "check cancelled"
)

// DefaultTimeout is the timeout of a check whose configured timeout is not
// positive (the configuration's default, doc/design.md §15).
const DefaultTimeout = 60000 * time.Millisecond

// Runner runs a workspace's named checks. The zero value runs nothing: it is
// untrusted. A Runner holds no state between calls; it may be reused, but its
// calls should not overlap (checks share the workspace).
type Runner struct {
	// Root is the workspace root, the working directory of every check.
	Root string
	// Trusted enables execution; without it every check is "unverified".
	Trusted bool
	// Checks are the configured checks, in configuration order.
	Checks []config.Check
	// Fresh, when non-nil, is called before and after each check; an error
	// makes that result "stale" with the error text (the workspace root was
	// replaced). A check found stale before it starts is not executed.
	Fresh func(ctx context.Context) error
	// OnStart and OnEnd, when non-nil, are called around each configured
	// check that RunCheck handles, whether or not it executes (progress
	// events). They are not called for an unknown check name.
	OnStart func(c config.Check)
	OnEnd   func(r report.CheckResult)
	// Replay, when non-nil, answers each check instead of executing it:
	// the status and output its command gave when they were recorded (the
	// reviewer measurement's cases, doc/design.md §8.10). No front end
	// sets it.
	Replay func(c config.Check) (status, stdout string)
}

// Run runs the check called name, or every configured check when name is "",
// and aggregates the results (doc/design.md §9, doc/design.md §9.3).
//
// With no name, the required checks are those configured required:true.
// With a name, only that check runs and it is treated as required whatever
// its configuration says (its result still shows the configured flag); an
// unknown name gives one "unavailable" result.
//
// The report is verified when at least one required check ran and all
// required results are "ok"; its status is then "ok". Otherwise the status is
// "failed" when a required check failed, else "cancelled" when a check was
// cancelled, else "unverified"; the reason is the sentence of [Reason].
//
// Once ctx is cancelled, the running check is stopped and the checks not yet
// started are not executed: each is still reported, with status "cancelled",
// so the report always lists every check asked for.
func (r *Runner) Run(ctx context.Context, name string) report.CheckReport {
	results := []report.CheckResult{}
	var required []int // indices into results
	if name == "" {
		for _, c := range r.Checks {
			if c.Required {
				required = append(required, len(results))
			}
			results = append(results, r.RunCheck(ctx, c))
		}
	} else {
		required = []int{0}
		if c, ok := r.find(name); ok {
			results = append(results, r.RunCheck(ctx, c))
		} else {
			results = append(results, report.CheckResult{
				Name:      name,
				Source:    report.SourceCheck,
				Filetypes: []string{},
				Status:    report.StatusUnavailable,
				Error:     msgUnknown,
			})
		}
	}
	rep := aggregate(results, required)
	req := make([]report.CheckResult, len(required))
	for i, idx := range required {
		req[i] = results[idx]
	}
	rep.Reason = reason(rep, req, r.names())
	return rep
}

// names are the configured checks' names, in configuration order.
func (r *Runner) names() []string {
	out := make([]string, 0, len(r.Checks))
	for _, c := range r.Checks {
		out = append(out, c.Name)
	}
	return out
}

// find returns the first configured check called name.
func (r *Runner) find(name string) (config.Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return config.Check{}, false
}

// aggregate builds the check report of results, where required lists the
// indices of the required results.
func aggregate(results []report.CheckResult, required []int) report.CheckReport {
	verified := len(required) > 0
	failed := false
	for _, i := range required {
		switch results[i].Status {
		case report.StatusOK:
		case report.StatusFailed:
			verified, failed = false, true
		default:
			verified = false
		}
	}
	cancelled := false
	for _, res := range results {
		if res.Status == report.StatusCancelled {
			cancelled = true
		}
	}
	rep := report.CheckReport{Verified: verified, Checks: results}
	switch {
	case verified:
		rep.Status = report.StatusOK
	case failed:
		rep.Status = report.StatusFailed
	case cancelled:
		rep.Status = report.StatusCancelled
	default:
		rep.Status = report.StatusUnverified
	}
	return rep
}

// RunCheck runs one check and returns its result, calling OnStart and OnEnd
// around it.
//
// Results by situation: untrusted → "unverified" (nothing executed); ctx
// already cancelled → "cancelled" (not started); Fresh failing before →
// "stale" (not executed); executable missing, not executable, or the root
// missing → "unavailable" with the OS message; another start error → "error";
// exit 0 → "ok"; another exit status → "failed" with that returncode; killed
// by a signal → "failed" with returncode minus the signal number; timeout →
// "timeout"; cancellation → "cancelled"; Fresh failing after → "stale" (the
// output is kept, the returncode dropped). Results that did not execute carry
// no output and no duration.
func (r *Runner) RunCheck(ctx context.Context, c config.Check) report.CheckResult {
	if r.OnStart != nil {
		r.OnStart(c)
	}
	res := r.runCheck(ctx, c)
	if r.OnEnd != nil {
		r.OnEnd(res)
	}
	return res
}

func (r *Runner) runCheck(ctx context.Context, c config.Check) report.CheckResult {
	res := baseResult(c)
	if !r.Trusted {
		res.Status, res.Error = report.StatusUnverified, msgUntrusted
		return res
	}
	if ctx.Err() != nil {
		res.Status, res.Error = report.StatusCancelled, msgCancelled
		return res
	}
	if r.Fresh != nil {
		if err := r.Fresh(ctx); err != nil {
			res.Status, res.Error = report.StatusStale, err.Error()
			if ctx.Err() != nil { // cancelled while reading the files
				res.Status, res.Error = report.StatusCancelled, msgCancelled
			}
			return res
		}
	}
	if r.Replay != nil {
		res.Status, res.Stdout = r.Replay(c)
		if res.Status == report.StatusOK || res.Status == report.StatusFailed {
			code := 0
			if res.Status == report.StatusFailed {
				code = 1
			}
			res.Returncode = &code
		}
		return res
	}
	timeout := time.Duration(c.Timeout) * time.Millisecond
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	started := time.Now()
	out := execute(ctx, r.Root, c.Cmd, envFor(c.Env), timeout)
	res.DurationMS = time.Since(started).Round(time.Millisecond).Milliseconds()
	res.Status, res.Returncode, res.Error = out.status, out.returncode, out.err
	res.Stdout, res.StdoutTruncated = out.stdout.String(), out.stdout.Truncated()
	res.Stderr, res.StderrTruncated = out.stderr.String(), out.stderr.Truncated()
	if r.Fresh != nil && res.Status != report.StatusCancelled {
		if err := r.Fresh(ctx); err != nil {
			res.Status, res.Error, res.Returncode = report.StatusStale, err.Error(), nil
			if ctx.Err() != nil {
				res.Status, res.Error = report.StatusCancelled, msgCancelled
			}
		}
	}
	return res
}

// baseResult is the part of a result that comes from the configuration.
func baseResult(c config.Check) report.CheckResult {
	filetypes := append([]string{}, c.Filetypes...) // [] rather than null in JSON
	return report.CheckResult{
		Name:      c.Name,
		Source:    report.SourceCheck,
		Cmd:       append([]string(nil), c.Cmd...),
		Timeout:   c.Timeout,
		Required:  c.Required,
		Kind:      c.Kind,
		Filetypes: filetypes,
	}
}
