package verify

import (
	"fmt"
	"slices"

	flowcheck "flow/runtime/check"
	"flow/runtime/report"
)

// Reasons a verification is not verified.
const (
	// ReasonChecks is the last resort when the required checks did not all
	// run and pass and the check report names no cause (the check runner
	// names one: see check.Reason).
	ReasonChecks = "The required checks did not all run and pass"
	// ReasonCoverage is given when a changed source file lacks static coverage.
	ReasonCoverage = "Missing or failing static analysis for changed source"
	// ReasonStale is given when a changed file moved after the coder finished.
	ReasonStale = "Changed files were modified during verification/review"
)

// RequiredPassed reports whether at least one required check ran and every
// required check passed. Optional checks neither satisfy nor fail it.
func RequiredPassed(checks []report.CheckResult) bool {
	ran := false
	for _, c := range checks {
		if !c.Required {
			continue
		}
		if c.Status != report.StatusOK {
			return false
		}
		ran = true
	}
	return ran
}

// Decide combines the check report of one verification step with the
// coverage of the changed files into a verification object (doc/design.md §8.2
// items 3–4). The check report's own verdict is not trusted on its own: verified
// additionally requires that the results show at least one required check
// that passed and none that did not, and that every coverage item is ok.
//
// A coverage gap makes the status "unverified" unless it already records a
// failure (failed, stale, error, timeout), whose status and reason are kept
// so the failing check stays visible. fingerprints are attached as given.
func Decide(checks report.CheckReport, coverage []report.Coverage, fingerprints map[string]string) report.Verification {
	v := report.Verification{
		Status:       checks.Status,
		Verified:     checks.Verified,
		Checks:       slices.Clone(checks.Checks),
		Reason:       checks.Reason,
		Source:       checks.Source,
		Coverage:     slices.Clone(coverage),
		Fingerprints: fingerprints,
	}
	if v.Checks == nil {
		v.Checks = []report.CheckResult{}
	}
	if v.Coverage == nil {
		v.Coverage = []report.Coverage{}
	}
	if v.Status == "" {
		v.Status = report.StatusUnverified
	}
	if v.Reason == "" && checks.Error != "" {
		v.Reason = checks.Error
	}
	if v.Status != report.StatusOK || !RequiredPassed(v.Checks) {
		v.Verified = false
	}
	if !v.Verified && v.Status == report.StatusOK {
		v.Status = report.StatusUnverified
	}
	if !v.Verified && v.Reason == "" {
		unverified := checks
		unverified.Verified = false
		v.Reason = flowcheck.Reason(unverified, nil)
	}
	if !v.Verified && v.Reason == "" {
		v.Reason = ReasonChecks
	}
	for _, c := range v.Coverage {
		if c.Status == report.StatusOK {
			continue
		}
		checksPassed := v.Verified
		v.Verified = false
		if !failureStatuses[v.Status] {
			v.Status = report.StatusUnverified
			if checksPassed {
				// A check failure or absence is the cause to name first.
				v.Reason = coverageReason(c)
			}
		}
		break
	}
	if v.Verified {
		v.Status = report.StatusOK
		v.Reason = ""
	}
	return v
}

// MarkStale turns v into a stale, unverified verification with reason. It is
// a no-op on a nil v.
func MarkStale(v *report.Verification, reason string) {
	if v == nil {
		return
	}
	v.Status = report.StatusStale
	v.Verified = false
	v.Reason = reason
}

// coverageReason names the changed file without passing static analysis.
func coverageReason(c report.Coverage) string {
	lang := c.Language
	if lang == "" {
		lang = "its language"
	}
	return fmt.Sprintf("%s: no lint check passed on %s; configure a required lint check for %s (kind = \"lint\") or fix its findings",
		ReasonCoverage, c.Path, lang)
}
