package report

// EventModelCall is the Kind of a run report's model-call events.
const EventModelCall = "model_call"

// Event is one entry of a run report's events, in the order they happened:
// a tool call (Kind ""), with the reference's fields {role, tool,
// tool_call_id, status, error?, duration_ms, bytes, truncated}, or one
// model call (Kind [EventModelCall]) with its own fields {kind, role,
// cycle, turn, status, error?, duration_ms, bytes, prompt_tokens,
// completion_tokens, done_reason, native_tool_calls, text_tool_calls,
// note?}. Each kind is encoded with its own fields only, so tool events
// keep the reference's shape.
type Event struct {
	// Kind is "" for a tool call, or EventModelCall.
	Kind string `json:"kind,omitempty"`
	Role string `json:"role"`
	// Tool and ToolCallID identify a tool call.
	Tool       string `json:"tool,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	Status     string `json:"status"`
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	// Bytes is the size of the tool result, or of the model reply's content.
	Bytes     int  `json:"bytes"`
	Truncated bool `json:"truncated,omitempty"`
	// Repeated marks a tool call that repeated the previous turn's identical
	// call and was answered with that call's result instead of being run
	// again (omitted when false, so other tool events keep their shape).
	Repeated bool `json:"repeated,omitempty"`
	// FromText marks a tool call recognised in the reply's text rather than
	// sent as one of the API's tool calls (omitted when false).
	FromText bool `json:"from_text,omitempty"`

	// Cycle is the model call's cycle (0 for the planner, 1.. after).
	Cycle int `json:"cycle,omitempty"`
	// Turn is the model call's 1-based turn within its role invocation.
	Turn int `json:"turn,omitempty"`
	// PromptTokens and CompletionTokens are the server's counts for the call.
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
	// PromptEvalMS is the server's time evaluating the prompt, when it
	// says (the native API): most of a call's time on a CPU, less when the
	// server had the prompt's start cached.
	PromptEvalMS int64 `json:"prompt_eval_ms,omitempty"`
	// PromptChars is the prompt's size in characters as the model's chat
	// template sees it (the messages' text, then the tools' schemas), and
	// NewPromptChars how many of them do not continue a prefix that an
	// earlier call of the run already sent: what a server's prompt cache
	// could not have held however many prompts it kept. With
	// PromptTokens they estimate the run's distinct prompt tokens.
	PromptChars    int `json:"prompt_chars,omitempty"`
	NewPromptChars int `json:"new_prompt_chars,omitempty"`
	// DoneReason is the server's done_reason (native) or finish_reason
	// (OpenAI), for example "stop", "length" or "tool_calls".
	DoneReason string `json:"done_reason,omitempty"`
	// NativeToolCalls and TextToolCalls count the reply's tool calls that
	// came as the API's tool calls and those recognised in its text.
	NativeToolCalls int `json:"native_tool_calls,omitempty"`
	TextToolCalls   int `json:"text_tool_calls,omitempty"`
	// Note says what the host did with the reply beyond the usual, for
	// example the structured verdict request or a corrective retry.
	Note string `json:"note,omitempty"`
}

// toolEventJSON is a tool call's entry: the reference's fields.
type toolEventJSON struct {
	Role       string `json:"role"`
	Tool       string `json:"tool"`
	ToolCallID string `json:"tool_call_id"`
	Status     string `json:"status"`
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Bytes      int    `json:"bytes"`
	Truncated  bool   `json:"truncated"`
	Repeated   bool   `json:"repeated,omitempty"`
	FromText   bool   `json:"from_text,omitempty"`
}

// modelCallJSON is a model call's entry; its counts are always present.
type modelCallJSON struct {
	Kind             string `json:"kind"`
	Role             string `json:"role"`
	Cycle            int    `json:"cycle"`
	Turn             int    `json:"turn"`
	Status           string `json:"status"`
	Error            string `json:"error,omitempty"`
	DurationMS       int64  `json:"duration_ms"`
	Bytes            int    `json:"bytes"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	DoneReason       string `json:"done_reason"`
	NativeToolCalls  int    `json:"native_tool_calls"`
	TextToolCalls    int    `json:"text_tool_calls"`
	PromptEvalMS     int64  `json:"prompt_eval_ms,omitempty"`
	PromptChars      int    `json:"prompt_chars,omitempty"`
	NewPromptChars   int    `json:"new_prompt_chars,omitempty"`
	Note             string `json:"note,omitempty"`
}

// MarshalJSON encodes e with the fields of its kind only.
func (e Event) MarshalJSON() ([]byte, error) {
	if e.Kind == EventModelCall {
		return Marshal(modelCallJSON{
			Kind: e.Kind, Role: e.Role, Cycle: e.Cycle, Turn: e.Turn, Status: e.Status, Error: e.Error,
			DurationMS: e.DurationMS, Bytes: e.Bytes, PromptTokens: e.PromptTokens,
			CompletionTokens: e.CompletionTokens, DoneReason: e.DoneReason,
			NativeToolCalls: e.NativeToolCalls, TextToolCalls: e.TextToolCalls, PromptEvalMS: e.PromptEvalMS,
			PromptChars: e.PromptChars, NewPromptChars: e.NewPromptChars, Note: e.Note,
		})
	}
	return Marshal(toolEventJSON{
		Role: e.Role, Tool: e.Tool, ToolCallID: e.ToolCallID, Status: e.Status, Error: e.Error,
		DurationMS: e.DurationMS, Bytes: e.Bytes, Truncated: e.Truncated, Repeated: e.Repeated,
		FromText: e.FromText,
	})
}
