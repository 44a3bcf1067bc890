package check

import (
	"fmt"
	"strings"

	"flow/runtime/report"
)

// Reason is the one sentence a person can act on that explains why a check
// report is not verified: the first required check that did not pass and
// how (its exit code, the --trusted refusal, an unknown name with the
// configured names, a missing executable, a timeout), or that no required
// check is configured. configured are the configured checks' names. It is
// "" for a verified report.
func Reason(rep report.CheckReport, configured []string) string {
	var required []report.CheckResult
	for _, c := range rep.Checks {
		if c.Required {
			required = append(required, c)
		}
	}
	return reason(rep, required, configured)
}

// reason is [Reason] with the required results given: a check run by name
// is required whatever its configuration says.
func reason(rep report.CheckReport, required []report.CheckResult, configured []string) string {
	if rep.Verified {
		return ""
	}
	if len(required) == 0 {
		if len(rep.Checks) == 0 {
			return ReasonNoChecks
		}
		return ReasonNoRequired
	}
	var failed []report.CheckResult
	for _, c := range required {
		if c.Status == report.StatusFailed {
			failed = append(failed, c)
		}
	}
	if len(failed) > 0 {
		return failedSentence(failed)
	}
	for _, c := range required {
		if c.Status != report.StatusOK {
			return resultSentence(c, configured)
		}
	}
	return ReasonNoRequired
}

// Sentences of [Reason] that name no check.
const (
	// ReasonNoChecks: nothing is configured, so nothing can verify.
	ReasonNoChecks = "No checks are configured, so nothing can verify the workspace: add a [checks.NAME] with required = true to the configuration"
	// ReasonNoRequired: checks exist, none is required.
	ReasonNoRequired = "No required check ran, so nothing verified the workspace: mark at least one [checks.NAME] required = true"
	// ReasonUntrusted: checks run only with --trusted.
	ReasonUntrusted = "Checks were not run because flow was started without --trusted: run it with --trusted to execute the configured checks"
)

// failedSentence names the failed required checks and their exit codes.
func failedSentence(failed []report.CheckResult) string {
	parts := make([]string, len(failed))
	for i, c := range failed {
		parts[i] = c.Name + exitNote(c)
	}
	if len(failed) == 1 {
		return fmt.Sprintf("The required check %s failed; its output says why", parts[0])
	}
	return fmt.Sprintf("The required checks %s failed; their output says why", joinAnd(parts))
}

// exitNote is " (exit 1)", " (killed by signal 9)" or "".
func exitNote(c report.CheckResult) string {
	if c.Returncode == nil {
		return ""
	}
	if n := *c.Returncode; n < 0 {
		return fmt.Sprintf(" (killed by signal %d)", -n)
	}
	return fmt.Sprintf(" (exit %d)", *c.Returncode)
}

// resultSentence explains one required check that neither passed nor failed.
func resultSentence(c report.CheckResult, configured []string) string {
	switch {
	case c.Status == report.StatusUnverified && c.Error == msgUntrusted:
		return ReasonUntrusted
	case c.Status == report.StatusUnavailable && c.Error == msgUnknown:
		if len(configured) == 0 {
			return fmt.Sprintf("No check named %q is configured, and no checks are configured at all", c.Name)
		}
		return fmt.Sprintf("No check named %q is configured; the configured checks are %s", c.Name, strings.Join(configured, ", "))
	case c.Status == report.StatusUnavailable && len(c.Cmd) > 0 && strings.Contains(c.Error, "executable file not found"):
		return fmt.Sprintf("The check %s could not start: %s is not installed or not on PATH; install it or change [checks.%s] cmd", c.Name, c.Cmd[0], c.Name)
	case c.Status == report.StatusUnavailable && c.Error != "":
		return fmt.Sprintf("The check %s could not start: %s", c.Name, c.Error)
	case c.Status == report.StatusUnavailable:
		return fmt.Sprintf("The check %s is unavailable", c.Name)
	case c.Status == report.StatusTimeout:
		return fmt.Sprintf("The required check %s timed out after %s; raise [checks.%s] timeout or make it faster", c.Name, millis(c.Timeout), c.Name)
	case c.Status == report.StatusCancelled:
		return fmt.Sprintf("The check %s was cancelled before it finished", c.Name)
	case c.Status == report.StatusStale:
		return fmt.Sprintf("The result of the check %s is stale: %s", c.Name, c.Error)
	case c.Error != "":
		return fmt.Sprintf("The check %s could not run: %s", c.Name, c.Error)
	}
	return fmt.Sprintf("The required check %s ended %s", c.Name, c.Status)
}

// millis renders a configured timeout in milliseconds ("60s", "1500ms").
func millis(ms int) string {
	if ms <= 0 {
		ms = int(DefaultTimeout.Milliseconds())
	}
	if ms%1000 == 0 {
		return fmt.Sprintf("%ds", ms/1000)
	}
	return fmt.Sprintf("%dms", ms)
}

// joinAnd joins "a", "a and b", "a, b and c".
func joinAnd(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
