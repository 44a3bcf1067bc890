package ollamatest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// script is the JSON script file format; see the package documentation.
type script struct {
	Version      string              `json:"version"`
	Models       []string            `json:"models"`
	Capabilities map[string][]string `json:"capabilities"`
	// ParameterSizes are models' sizes as /api/show gives them ("1.5B").
	ParameterSizes map[string]string `json:"parameter_sizes"`
	Turns          []scriptTurn      `json:"turns"`
}

type scriptTurn struct {
	Model            string       `json:"model"`
	ModelNotFound    bool         `json:"model_not_found"`
	Content          string       `json:"content"`
	Thinking         string       `json:"thinking"`
	ToolCalls        []scriptCall `json:"tool_calls"`
	Error            string       `json:"error"`
	Status           int          `json:"status"`
	DelayMS          int64        `json:"delay_ms"`
	ChunkDelayMS     int64        `json:"chunk_delay_ms"`
	RedirectTo       string       `json:"redirect_to"`
	Oversize         int          `json:"oversize"`
	PromptTokens     int          `json:"prompt_tokens"`
	CompletionTokens int          `json:"completion_tokens"`
	DoneReason       string       `json:"done_reason"`
	NoStream         bool         `json:"no_stream"`
}

type scriptCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is a JSON string holding the raw text, or any other JSON
	// value, which stands for its own text.
	Arguments json.RawMessage `json:"arguments"`
}

// maxScriptDelay bounds delay_ms and chunk_delay_ms.
const maxScriptDelay = 10 * time.Minute

// LoadScript applies a JSON script (see the package documentation): it sets
// the version, models and capabilities it names and queues its turns.
// Unknown fields are errors, so that a typo does not silently change a test.
func (s *Server) LoadScript(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var sc script
	if err := dec.Decode(&sc); err != nil {
		return fmt.Errorf("parse script: %w", err)
	}
	if dec.More() {
		return errors.New("parse script: data after the script object")
	}
	turns := make([]Turn, len(sc.Turns))
	for i, st := range sc.Turns {
		t, err := st.turn()
		if err != nil {
			return fmt.Errorf("script turn %d: %w", i+1, err)
		}
		turns[i] = t
	}
	if sc.Version != "" {
		s.SetVersion(sc.Version)
	}
	if sc.Models != nil {
		s.SetModels(sc.Models...)
	}
	for name, caps := range sc.Capabilities {
		s.SetCapabilities(name, caps...)
	}
	for name, size := range sc.ParameterSizes {
		if parameterCount(size) == 0 {
			return fmt.Errorf("parse script: parameter size %q of %s: want a number and K, M, B or T, as 1.5B", size, name)
		}
		s.SetParameterSize(name, size)
	}
	s.Enqueue(turns...)
	return nil
}

func (st scriptTurn) turn() (Turn, error) {
	switch {
	case st.DelayMS < 0 || time.Duration(st.DelayMS)*time.Millisecond > maxScriptDelay:
		return Turn{}, fmt.Errorf("delay_ms %d out of range 0..%d", st.DelayMS, maxScriptDelay.Milliseconds())
	case st.ChunkDelayMS < 0 || time.Duration(st.ChunkDelayMS)*time.Millisecond > maxScriptDelay:
		return Turn{}, fmt.Errorf("chunk_delay_ms %d out of range 0..%d", st.ChunkDelayMS, maxScriptDelay.Milliseconds())
	case st.Status != 0 && (st.Status < 100 || st.Status > 599):
		return Turn{}, fmt.Errorf("status %d is not an HTTP status", st.Status)
	case st.Oversize < 0:
		return Turn{}, fmt.Errorf("oversize %d is negative", st.Oversize)
	case st.PromptTokens < 0 || st.CompletionTokens < 0:
		return Turn{}, errors.New("token counts must not be negative")
	}
	t := Turn{
		Model:            st.Model,
		ModelNotFound:    st.ModelNotFound,
		Content:          st.Content,
		Thinking:         st.Thinking,
		Error:            st.Error,
		Status:           st.Status,
		Delay:            time.Duration(st.DelayMS) * time.Millisecond,
		ChunkDelay:       time.Duration(st.ChunkDelayMS) * time.Millisecond,
		RedirectTo:       st.RedirectTo,
		Oversize:         st.Oversize,
		PromptTokens:     st.PromptTokens,
		CompletionTokens: st.CompletionTokens,
		DoneReason:       st.DoneReason,
		NoStream:         st.NoStream,
	}
	for j, c := range st.ToolCalls {
		args := string(bytes.TrimSpace(c.Arguments))
		if len(args) > 0 && args[0] == '"' {
			if err := json.Unmarshal(c.Arguments, &args); err != nil {
				return Turn{}, fmt.Errorf("tool call %d arguments: %w", j+1, err)
			}
		}
		t.ToolCalls = append(t.ToolCalls, Call{ID: c.ID, Name: c.Name, Arguments: args})
	}
	return t, nil
}
