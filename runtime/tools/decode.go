package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxScanDepth bounds the bracket nesting DecodeArgs accepts before it hands
// the text to encoding/json. It is generous: the exact depth rule is
// ValidateArgs's job; this only keeps absurd input (depth 8192) cheap.
const maxScanDepth = 4 * MaxArgDepth

// DecodeArgs parses the raw argument text of a tool call. Numbers stay
// json.Number so that integers are exact. An empty (or all-space) text and
// the literal null both mean {}. Anything but one JSON object is an error.
func DecodeArgs(text string) (map[string]any, error) {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" || trimmed == "null" {
		return map[string]any{}, nil
	}
	return decodeObject(trimmed)
}

// decodeObject parses text, which must be exactly one JSON object, keeping
// numbers as json.Number.
func decodeObject(text string) (map[string]any, error) {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return nil, errors.New("expected a JSON object, got no text")
	}
	if depth := scanDepth(trimmed); depth > maxScanDepth {
		return nil, fmt.Errorf("arguments exceed nesting depth %d", MaxArgDepth)
	}
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("unexpected end of JSON input (is a brace or quote missing?)")
		}
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object, got %s", kindOf(v))
	}
	return obj, nil
}

// scanDepth returns the deepest bracket nesting of JSON text, ignoring
// brackets inside strings. It does not validate the text.
func scanDepth(s string) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
