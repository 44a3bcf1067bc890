package agent

import (
	"flow/runtime/config"
	"flow/runtime/model"
)

// policy is what one role is, for the generic turn pipeline
// (doc/design.md §6.6): the tools it is offered, the bound on each reply,
// the extractors that find its tool calls, the rules that judge each of
// its turns, and what its brief puts first. It is the one place that
// tells the roles apart; the pipeline never looks at a role's name.
type policy struct {
	role string
	// offered are the tools declared in every request: the same list for
	// every role, so that every conversation starts with the same prefix
	// (doc/design.md §6.5). What a role may call is allowed; the host
	// refuses the rest when they are called.
	offered []model.Tool
	// allowed are the tools this role may call, named in the messages
	// that tell a role what it can do.
	allowed []model.Tool
	// format, when set, is the JSON Schema every reply must match (the
	// server's structured output): the reviewer's verdict.
	format string
	// maxTokens bounds each reply; 0 leaves the client's bound.
	maxTokens int
	// answerCode: code in an answer that changed no file is applied
	// (agent.answer_code, trusted coder), and the system prompt says so.
	answerCode bool
	// whole: the coder answers with each changed file whole, in a fenced
	// block named by its path, and the host writes it (agent.edit_format,
	// trusted coder).
	whole bool
	// nudge: an answer while no file changed gets one reminder that
	// nothing was applied (trusted coder).
	nudge bool
	// review: the role finishes with a verdict (the reviewer): an empty
	// reply does not end it, and an answer without a parsable verdict is
	// followed by the verdict request.
	review bool
	// doneAfterRepeats: a role that changed files and then only repeats
	// its calls is done, not stuck (the coder: its checks and the reviewer
	// judge the change).
	doneAfterRepeats bool
	// repeatAdvice ends the message to a role whose turn only repeated its
	// previous calls: what to do instead.
	repeatAdvice string
	// retry, when above 0, is the sampling temperature of a request that
	// follows a reply of the role which changed no file and called no
	// tool (agent.retry_temperature, trusted coder): at a low temperature
	// a small model gives that reply back word for word.
	retry float64
	// showChanged: the role's message shows the current content of the
	// files changed since the run began (the coder edits them; the
	// reviewer has their diffs).
	showChanged bool
}

// maxFormatTokens bounds the reply to a request for structured output. A
// model whose sampling the server constrains to the schema, but which does
// not want to write it, can otherwise go on (whitespace, an endless string)
// until the window is full or the timeout ends the role; a verdict needs
// far less.
const maxFormatTokens = 1024

// maxReadOnlyReplyTokens bounds each reply of the planner and the
// reviewer, who write a plan, a verdict or a tool call, never a file: a
// small model caught in a loop otherwise writes until the call times out
// (seen with a 1.5B planner). The coder keeps the client's bound, since
// its file_write calls carry whole files.
const maxReadOnlyReplyTokens = 2048

// policyFor returns the policy of role name in this run.
func (r *env) policyFor(name string) policy {
	p := policy{role: name, offered: r.sharedTools(), allowed: r.tools.Schemas(name), repeatAdvice: msgRepeatAdvice(name)}
	switch name {
	case config.RoleCoder:
		p.answerCode = r.cfg.Agent.AnswerCode && r.cfg.Trusted
		p.whole = r.format.edit == config.EditWhole && r.cfg.Trusted
		p.nudge = r.cfg.Trusted
		if _, o, _ := r.cfg.ServerFor(name); r.cfg.Trusted && r.cfg.Agent.RetryTemperature > o.Temperature {
			p.retry = r.cfg.Agent.RetryTemperature
		}
		p.doneAfterRepeats = true
		p.showChanged = true
	case config.RoleReviewer:
		p.maxTokens = maxFormatTokens
		p.review = true
		p.format = VerdictSchema
	default:
		p.maxTokens = maxReadOnlyReplyTokens
	}
	return p
}

// request is the model request of one turn: the conversation so far, the
// shared tool declarations, the role's reply bound and its structured
// output, if any.
func (p policy) request(m string, conv *conversation) model.Request {
	req := model.Request{Model: m, Messages: append([]model.Message(nil), conv.msgs...), Tools: conv.declaredTools(), MaxTokens: p.maxTokens}
	if p.format != "" {
		req.Format = []byte(p.format)
	}
	return req
}

// formatRequest is a request for structured output (the verdict request
// after an answer without a verdict): the answer must match schema. The
// tools stay declared, so the prompt keeps its shared prefix; the format
// leaves no room for a call.
func formatRequest(m string, conv *conversation, schema string) model.Request {
	return model.Request{Model: m, Messages: append([]model.Message(nil), conv.msgs...), Tools: conv.declaredTools(), Format: []byte(schema), MaxTokens: maxFormatTokens}
}

// sharedTools returns the tools declared to every role: those of the
// coder, then any other role's (the editor's read tools), each once, in a
// fixed order.
func (r *env) sharedTools() []model.Tool {
	var out []model.Tool
	seen := map[string]bool{}
	for _, role := range []string{config.RoleCoder, config.RolePlanner, config.RoleReviewer} {
		for _, t := range r.tools.Schemas(role) {
			if !seen[t.Name] {
				seen[t.Name] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// msgRepeatAdvice is what a role whose turn only repeated its previous
// calls should do instead.
func msgRepeatAdvice(role string) string {
	switch role {
	case config.RolePlanner:
		return "Answer now with your plan, without a tool call."
	case config.RoleReviewer:
		return "Answer now with your verdict, without a tool call."
	}
	return "If your change is made, answer with a short summary of it and no tool call; otherwise make a different call."
}

// msgRepeatTurn tells a role that its turn only repeated its previous
// calls, and what to do instead.
func msgRepeatTurn(role string) string {
	return "You repeated your previous calls; they were not run again and their results are above. " +
		"Repeating them once more ends your turn. " + msgRepeatAdvice(role)
}
