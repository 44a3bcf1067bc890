// Package model defines what the agent needs from a chat model backend: the
// message and tool-call types and the [Backend] interface. Wire formats live
// in the backend packages (runtime/model/ollama); this package is a leaf.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"` // tool messages
	Name       string     `json:"name,omitempty"`         // tool messages: the tool's name
}

// ToolCall is one function call requested by the model.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the raw JSON text of the arguments as the model produced
	// them. It may be invalid JSON; validating it is the tools layer's job.
	Arguments string `json:"arguments"`
}

// Tool is a function tool offered to the model.
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"` // a JSON Schema object
}

// Request is one chat call.
type Request struct {
	Model    string
	Messages []Message
	Tools    []Tool
	// Format, when set, asks for structured output: a JSON Schema object
	// the answer's content must match, or the JSON string "json" for any
	// JSON value. Backends that support it constrain the answer (Ollama's
	// native "format", the OpenAI API's "response_format"); the caller still
	// parses and validates what comes back, since not every server obeys.
	Format json.RawMessage
	// MaxTokens, when positive, bounds the reply's length in tokens (the
	// native API's num_predict, the OpenAI API's max_tokens); 0 leaves the
	// server's own bound. A reply cut there ends with done reason "length".
	MaxTokens int
	// Temperature, when set, is this call's sampling temperature instead
	// of the client's own.
	Temperature *float64
	// OnDelta, when set, receives streamed content as it arrives.
	OnDelta func(text string)
}

// Usage counts the tokens of one or more calls, as reported by the server.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.PromptTokens + o.PromptTokens, u.CompletionTokens + o.CompletionTokens}
}

// DoneRepetition is the done reason of a reply that the client ended
// because it kept repeating one piece of text; the reply's content keeps
// what came before the loop and one copy of the piece, and its usage is
// unknown (zero).
const DoneRepetition = "repetition"

// Response is the assistant's answer to one Request.
type Response struct {
	Message    Message
	Usage      Usage
	DoneReason string
	// PromptEval is the time the server says it spent evaluating the
	// prompt (Ollama's native prompt_eval_duration); 0 when it does not
	// say. A prompt whose start the server had cached costs less of it.
	PromptEval time.Duration
}

// Backend is a chat model server.
type Backend interface {
	Chat(ctx context.Context, req Request) (Response, error)
}

// ModelInfo describes an installed model.
type ModelInfo struct {
	Name         string   `json:"name"`
	Capabilities []string `json:"capabilities,omitempty"`
	// ContextLength is the model's own context length in tokens (what it
	// was trained for; Ollama runs it at no more), as the server reports
	// it; 0 when the server does not say.
	ContextLength int `json:"context_length,omitempty"`
	// ParameterCount is the model's size in parameters, as the server
	// reports it; 0 when it does not say.
	ParameterCount int64 `json:"parameter_count,omitempty"`
}

// LoadedModel is a model the server holds in memory, with the context
// window it was loaded with.
type LoadedModel struct {
	Name string `json:"name"`
	// ContextLength is the window in tokens the model runs with now: what
	// the server truncates prompts to. 0 when the server does not say.
	ContextLength int `json:"context_length,omitempty"`
}

// WindowProber is a backend that can tell, before the first call, the
// context window in tokens the server runs a model with — what it
// truncates prompts to — and where it read it (an endpoint); 0 when the
// server does not say. With the OpenAI-compatible API the client cannot
// set the window, so this is how a run learns it.
type WindowProber interface {
	ServerWindow(ctx context.Context, name string) (tokens int, source string)
}

// Catalog lists the models a server has. flow doctor, the TUI's /models and
// /model use it; runs never do.
type Catalog interface {
	Version(ctx context.Context) (string, error)
	ListModels(ctx context.Context) ([]ModelInfo, error)
	ShowModel(ctx context.Context, name string) (ModelInfo, error)
}

// ErrModelNotFound is returned when the server does not have the model.
var ErrModelNotFound = errors.New("model not found")
