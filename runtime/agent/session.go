package agent

import (
	"context"

	"flow/runtime/report"
)

// session is one role invocation while it runs: the conversation and
// what the pipeline's stages carry from turn to turn. The after-turn
// rules keep their own state (rules.go).
type session struct {
	r     *env // the run, as its role invocations see it
	p     policy
	k     int // the invocation's number, for synthesised call ids
	model string
	// server names the role's server, for its report entry.
	server string
	conv   *conversation
	rules  []rule
	prev   promptSize // the previous call's size, for the window check
	seen   repeats    // answers of the previous turn's calls
	// now is what the invocation's message ends with ("Now: …", a repair
	// cycle's request), or "".
	now string
	// writes are the run's file changes when the invocation started.
	writes int
	// logged is the number of messages the invocation's previous call sent,
	// for the transcript (transcript.go).
	logged int
	// turns, toolErrors and summary are the role's figures for the report.
	turns, toolErrors int
	summary           string
	// leftOutTold are the files whose whole-file block this invocation
	// refused once for what it left out (whole.go): a second such block
	// is written, and the checks and the guard judge it.
	leftOutTold map[string]bool
}

// callResult is what became of one call of a turn.
type callResult struct {
	key      string // callKey
	status   string
	ran      bool // executed (not refused, not answered from the previous turn)
	repeated bool // answered from the previous turn
	refused  bool // refused before running (a duplicate id)
}

// turn is one finished model turn as the rules see it.
type turn struct {
	n    int  // 1-based
	last bool // no turn is left after this one (agent.max_iterations)
	// content is the reply's text.
	content string
	// calls are the turn's calls after normalisation (ids made unique).
	calls callBatch
	// code are the paths the answer's code changes, when its calls came
	// from the answer's code blocks.
	code []string
	// empty: no text and no call.
	empty bool
	// results are the calls' results, in order.
	results []callResult
	// wrote says a file changed in this role invocation so far.
	wrote bool
}

// interrupted is the report entry of an invocation that an internal error
// cut short.
func (s *session) interrupted() report.Role {
	return report.Role{Role: s.p.role, Model: s.model, Server: s.server, Status: report.StatusError, Turns: s.turns,
		Summary: s.summary, ToolErrors: s.toolErrors, Error: "interrupted by an internal error (the run's error says which)"}
}

// outcome assembles the role's report entry from how it ended.
func (s *session) outcome(e end) outcome {
	if e.summary != "" {
		s.summary = e.summary
	}
	o := outcome{end: e, Role: report.Role{
		Role: s.p.role, Model: s.model, Server: s.server, Status: e.status(), Turns: s.turns,
		Summary: s.summary, ToolErrors: s.toolErrors, Error: e.message(),
	}}
	if v := e.verdict; v != nil {
		approved := v.Approved
		o.Approved, o.Issues = &approved, v.Issues
		if v.Summary != "" {
			o.Summary = v.Summary
		}
	}
	return o
}

// decision is a rule's decision about a turn.
type decision struct {
	// end, when set, ends the role.
	end *end
	// say, when set, is the user message added before the next turn.
	say string
	// blank records the turn's reply as an empty assistant message (the
	// retry after an empty reply shows the model nothing to build on).
	blank bool
}

func (s decision) decided() bool { return s.end != nil || s.say != "" }

// pass is a rule's "not mine to decide".
var pass = decision{}

func stop(e end) decision { return decision{end: &e} }

// rule is one after-turn rule: its name (for tests and the design
// document) and its decision.
type rule struct {
	name  string
	apply func(ctx context.Context, t *turn) decision
}
