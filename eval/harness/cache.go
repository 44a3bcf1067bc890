package main

// The prompt figures of a flow run (doc/eval.md §2.4): what it sent, what
// no prompt cache could have held (its distinct tokens), what the server
// evaluated, and the share of its model time spent evaluating prompts.

// PromptFigures are one run's prompt tokens and model time.
type PromptFigures struct {
	// Sent sums the model calls' prompt_tokens.
	Sent int `json:"sent"`
	// Distinct estimates the tokens no earlier call of the run had sent as
	// a prefix: each call's new_prompt_chars at the call's own
	// characters-per-token (prompt_chars / prompt_tokens). 0 when the
	// report does not say.
	Distinct int `json:"distinct"`
	// Evaluated sums the server log's remaining= for the run (-server-log);
	// 0 without it.
	Evaluated int `json:"evaluated,omitempty"`
	// ModelMS and PromptEvalMS sum the calls' durations and the server's
	// prompt_eval_ms (native API).
	ModelMS      int64 `json:"model_ms"`
	PromptEvalMS int64 `json:"prompt_eval_ms"`
	// Roles are the same figures per role, when the server log's requests
	// match the run's model calls one for one.
	Roles map[string]*PromptFigures `json:"roles,omitempty"`
}

// add adds o to f (not the roles).
func (f *PromptFigures) add(o PromptFigures) {
	f.Sent += o.Sent
	f.Distinct += o.Distinct
	f.Evaluated += o.Evaluated
	f.ModelMS += o.ModelMS
	f.PromptEvalMS += o.PromptEvalMS
}

// promptFigures reads a run's model_call events and, when they match it
// call for call, the server log's requests of the run.
func promptFigures(events []map[string]any, server *ServerFigures) *PromptFigures {
	f := &PromptFigures{Roles: map[string]*PromptFigures{}}
	var calls []map[string]any
	for _, e := range events {
		if e["kind"] == "model_call" {
			calls = append(calls, e)
		}
	}
	if len(calls) == 0 {
		return nil
	}
	matched := server != nil && len(server.Calls) == len(calls)
	for i, e := range calls {
		var c PromptFigures
		c.Sent = num(e["prompt_tokens"])
		if chars, nw := num(e["prompt_chars"]), num(e["new_prompt_chars"]); chars > 0 && c.Sent > 0 {
			c.Distinct = int(float64(nw)*float64(c.Sent)/float64(chars) + 0.5)
		}
		c.ModelMS = int64(num(e["duration_ms"]))
		c.PromptEvalMS = int64(num(e["prompt_eval_ms"]))
		if matched {
			c.Evaluated = server.Calls[i].Remaining
		}
		f.add(c)
		role, _ := e["role"].(string)
		if f.Roles[role] == nil {
			f.Roles[role] = &PromptFigures{}
		}
		f.Roles[role].add(c)
	}
	if server != nil && !matched {
		f.Evaluated, f.Roles = server.EvaluatedTokens, nil // not one for one: no roles
	}
	return f
}

// num reads a JSON number.
func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}
