package ollamatest

import (
	"encoding/json"
	"strings"
)

// Format returns the structured output a recorded chat request asked for,
// whichever API it used: the native "format" member (a JSON Schema or
// "json"), or the OpenAI "response_format" member's schema
// (json_schema.schema), or the string "json" for {"type":"json_object"}.
// It returns nil when the request asked for none.
func (r Recorded) Format() json.RawMessage {
	if strings.HasPrefix(r.Path, "/v1/") {
		rf, _ := r.Body["response_format"].(map[string]any)
		switch rf["type"] {
		case "json_schema":
			js, _ := rf["json_schema"].(map[string]any)
			return marshalValue(js["schema"])
		case "json_object":
			if schema := marshalValue(rf["schema"]); schema != nil {
				return schema // llama-cpp-python's form
			}
			return json.RawMessage(`"json"`)
		}
		return nil
	}
	return marshalValue(r.Body["format"])
}

// marshalValue is the JSON text of a decoded value; nil for nil.
func marshalValue(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
