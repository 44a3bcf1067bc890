package verify

import (
	"context"
	"fmt"
	"strings"

	"flow/runtime/report"
)

// MeasureBaseline runs each named check once through checks, before the
// coder's first edit, and returns the results: the baseline a later
// verification is compared with (see [CompareBaseline]). Each check runs on
// its own (checks.Run(ctx, name)), so only the checks that decide
// "verified" cost time. A nil checks measures nothing.
func MeasureBaseline(ctx context.Context, checks CheckRunner, names []string) []report.CheckResult {
	if checks == nil {
		return nil
	}
	out := make([]report.CheckResult, 0, len(names))
	for _, n := range names {
		if ctx.Err() != nil {
			break
		}
		rep := checks.Run(ctx, n)
		for _, c := range rep.Checks {
			if c.Name == n {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// comparable tells a check outcome that says something about the code
// (it passed, failed or ran out of time) from one that says nothing (not
// run, cancelled, unavailable, stale).
func comparable(status string) (passed, ok bool) {
	switch status {
	case report.StatusOK:
		return true, true
	case report.StatusFailed, report.StatusTimeout:
		return false, true
	}
	return false, false
}

// CompareBaseline sets the Baseline and BaselineStatus of every result in
// checks that has a comparable counterpart in base, and returns one
// sentence saying what the run changed ("test was failing before this run
// and passes now (fixed)"), "" when nothing is comparable.
func CompareBaseline(checks []report.CheckResult, base []report.CheckResult) string {
	if len(base) == 0 {
		return ""
	}
	before := make(map[string]report.CheckResult, len(base))
	for _, b := range base {
		before[b.Name] = b
	}
	var fixed, broken, pre, same []string
	for i := range checks {
		c := &checks[i]
		b, ok := before[c.Name]
		if !ok {
			continue
		}
		was, ok1 := comparable(b.Status)
		now, ok2 := comparable(c.Status)
		if !ok1 || !ok2 {
			continue
		}
		c.BaselineStatus = b.Status
		switch {
		case !was && now:
			c.Baseline = report.BaselineFixed
			fixed = append(fixed, c.Name)
		case was && !now:
			c.Baseline = report.BaselineBroken
			broken = append(broken, c.Name)
		case !was && !now:
			c.Baseline = report.BaselinePreExisting
			pre = append(pre, c.Name)
		default:
			c.Baseline = report.BaselineUnchanged
			same = append(same, c.Name)
		}
	}
	var parts []string
	if len(broken) > 0 {
		parts = append(parts, names(broken)+" passed before this run and "+verb(broken, "fails", "fail")+" now (broken by this run)")
	}
	if len(pre) > 0 {
		parts = append(parts, names(pre)+" "+verb(pre, "was", "were")+" failing before this run and still "+verb(pre, "fails", "fail")+" (pre-existing)")
	}
	if len(fixed) > 0 {
		parts = append(parts, names(fixed)+" "+verb(fixed, "was", "were")+" failing before this run and "+verb(fixed, "passes", "pass")+" now (fixed)")
	}
	if len(same) > 0 && len(parts) == 0 {
		parts = append(parts, names(same)+" passed before this run and "+verb(same, "passes", "pass")+" now (unchanged)")
	}
	return strings.Join(parts, "; ")
}

func names(list []string) string {
	switch len(list) {
	case 1:
		return "check " + list[0]
	case 2:
		return "checks " + list[0] + " and " + list[1]
	}
	return "checks " + strings.Join(list[:len(list)-1], ", ") + " and " + list[len(list)-1]
}

func verb(list []string, one, many string) string {
	if len(list) == 1 {
		return one
	}
	return many
}

// applyBaseline compares v's checks with base, records the sentence, and
// makes a check failure's reason say whether the run broke the check or
// found it broken.
func applyBaseline(v *report.Verification, base []report.CheckResult) {
	v.Baseline = CompareBaseline(v.Checks, base)
	if v.Baseline == "" || v.Verified || v.Status != report.StatusFailed {
		return
	}
	var failing []report.CheckResult
	for _, c := range v.Checks {
		if c.Required && (c.Baseline == report.BaselineBroken || c.Baseline == report.BaselinePreExisting) {
			failing = append(failing, c)
		}
	}
	if len(failing) == 0 {
		return
	}
	s := CompareBaseline(failing, base)
	var codes []string
	for _, c := range failing {
		if c.Returncode != nil {
			codes = append(codes, fmt.Sprintf("%s exits %d", c.Name, *c.Returncode))
		}
	}
	v.Reason = strings.ToUpper(s[:1]) + s[1:]
	if len(codes) > 0 {
		v.Reason += "; " + strings.Join(codes, ", ") + ", its output says why"
	}
}
