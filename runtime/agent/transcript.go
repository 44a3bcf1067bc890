package agent

import (
	"flow/runtime/model"
	"flow/runtime/progress"
)

// transcriptEntry is one model call in the run's transcript
// (agent.transcript, doc/design.md §6.14): what the request added to the
// invocation's conversation and what came back. Together the entries of
// one invocation are its whole conversation, so a real model's run can be
// read afterwards, reply by reply.
type transcriptEntry struct {
	Role  string `json:"role"`
	Cycle int    `json:"cycle"`
	Turn  int    `json:"turn"`
	Model string `json:"model"`
	Note  string `json:"note,omitempty"`
	// Sent are the request's messages after those the invocation's
	// previous call sent: every message, the system prompt included, for
	// its first call.
	Sent []model.Message `json:"sent"`
	// Tools are the names of the tools declared, on an invocation's first
	// call (the later ones declare the same).
	Tools []string `json:"tools,omitempty"`
	// Format is the structured output the request asked for, if any.
	Format string `json:"format,omitempty"`
	// Reply is the model's message as the client returned it, before any
	// extraction; nil when the call failed.
	Reply      *model.Message `json:"reply,omitempty"`
	DoneReason string         `json:"done_reason,omitempty"`
	Error      string         `json:"error,omitempty"`
	// Partial is the text the failed call had streamed before it failed
	// (one cut by ollama.timeout): what the model was writing.
	Partial string `json:"partial,omitempty"`
}

// transcribe records call n of the session in the transcript, when the run
// keeps one; partial is the text a failed call streamed. A failure to record stops the transcript; it is a warning
// event, and transcribe returns its sentence for the call's report event,
// so that a report read without the progress events says it too. The run
// goes on.
func (s *session) transcribe(n int, req model.Request, note string, resp model.Response, err error, partial string) string {
	r := s.r
	if r.deps.Transcript == nil || r.transcriptOff {
		return ""
	}
	e := transcriptEntry{Role: s.p.role, Cycle: r.cycles, Turn: n, Model: req.Model, Note: note, Format: string(req.Format)}
	if s.logged < len(req.Messages) {
		e.Sent = req.Messages[s.logged:]
	}
	if s.logged == 0 {
		for _, t := range req.Tools {
			e.Tools = append(e.Tools, t.Name)
		}
	}
	s.logged = len(req.Messages)
	if err != nil {
		e.Error, e.Partial = err.Error(), partial
	} else {
		e.Reply, e.DoneReason = &resp.Message, resp.DoneReason
	}
	werr := r.deps.Transcript(e)
	if werr == nil {
		return ""
	}
	r.transcriptOff = true
	msg := "the transcript is not kept from here on: " + werr.Error()
	r.emit(progress.Event{Kind: progress.Warning, Message: msg})
	return msg
}
