package tools

import (
	"context"
	_ "embed"
	"strings"
	"unicode/utf8"

	"flow/internal/text"
	"flow/runtime/report"
)

//go:embed flow_check.md
var flowCheckRaw string

var flowCheckDoc = strings.TrimSpace(flowCheckRaw)

// flowCheckArgs are the arguments of flow_check.
type flowCheckArgs struct {
	Name string `json:"name,omitempty" desc:"name of one configured check; omit to run them all"`
}

// checkBody is the result of flow_check: the check report itself, plus
// truncated when output had to be cut to fit the result.
type checkBody struct {
	report.CheckReport
	Truncated bool `json:"truncated,omitempty"`
}

// flowCheck implements flow_check.
func (r *Registry) flowCheck(ctx context.Context, args flowCheckArgs) Result {
	rep := r.opts.Checks.Run(ctx, args.Name)
	if rep.Status == "" {
		// A runner bug; keep the result's status and content consistent.
		rep.Status = report.StatusError
		if rep.Error == "" {
			rep.Error = "the check runner returned no status"
		}
	}
	status := rep.Status
	total := 0
	for _, c := range rep.Checks {
		total = max(total, utf8.RuneCountInString(c.Stdout), utf8.RuneCountInString(c.Stderr))
	}
	content, truncated := fit(status, total, func(keep int) any {
		return cutCheckOutput(rep, keep)
	})
	msg := rep.Error
	if msg == "" && status != report.StatusOK {
		msg = rep.Reason
	}
	return Result{Status: status, Error: msg, Content: content, Truncated: truncated, Check: &rep}
}

// cutCheckOutput returns rep with every stdout and stderr cut to its last
// keep characters (the tail holds the error), flagging what was cut.
func cutCheckOutput(rep report.CheckReport, keep int) checkBody {
	body := checkBody{CheckReport: rep}
	body.Checks = make([]report.CheckResult, len(rep.Checks))
	for i, c := range rep.Checks {
		if utf8.RuneCountInString(c.Stdout) > keep {
			c.Stdout = text.Tail(c.Stdout, keep)
			c.StdoutTruncated = true
			body.Truncated = true
		}
		if utf8.RuneCountInString(c.Stderr) > keep {
			c.Stderr = text.Tail(c.Stderr, keep)
			c.StderrTruncated = true
			body.Truncated = true
		}
		body.Checks[i] = c
	}
	return body
}
