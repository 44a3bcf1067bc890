package agent

import (
	"bytes"
	"encoding/json"
	"strings"

	"flow/internal/text"
)

// Bounds on the verdict search, so that a pathological answer (thousands of
// unclosed braces) cannot make parsing slow: only the last maxVerdictScan
// bytes are searched, starting at most maxVerdictStarts opening braces from
// the end.
const (
	maxVerdictScan   = 16 * 1024
	maxVerdictStarts = 512
)

// reviewVerdict is the reviewer's structured verdict:
// {"approved": bool, "summary": string, "issues": [string]}.
type reviewVerdict struct {
	Approved bool
	Summary  string
	Issues   []string
}

// parseVerdict extracts the reviewer's verdict from its final answer. The
// answer may be the bare JSON object, contain it in a code fence, or embed it
// in prose; the last top-level JSON object with a boolean "approved" wins.
// Nested objects are not candidates, so an object that merely quotes an
// "approved" field inside another object is not mistaken for the verdict.
func parseVerdict(text string) (reviewVerdict, bool) {
	text = strings.TrimSpace(text)
	if v, ok := verdictFrom([]byte(text)); ok {
		return v, true
	}
	data := []byte(text)
	if len(data) > maxVerdictScan {
		data = data[len(data)-maxVerdictScan:]
	}
	if n := bytes.Count(data, []byte{'{'}); n > maxVerdictStarts {
		skip := n - maxVerdictStarts
		for i, c := range data {
			if c == '{' {
				if skip == 0 {
					data = data[i:]
					break
				}
				skip--
			}
		}
	}
	var best reviewVerdict
	found := false
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], '{')
		if j < 0 {
			break
		}
		start := i + j
		end, ok := objectEnd(data[start:])
		if !ok {
			i = start + 1
			continue
		}
		if v, ok := verdictFrom(data[start : start+end]); ok {
			best, found = v, true
		}
		i = start + end
	}
	return best, found
}

// objectEnd returns the length of the JSON object at the start of data.
func objectEnd(data []byte) (int, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return 0, false
	}
	return int(dec.InputOffset()), true
}

// verdictFrom decodes one candidate object.
func verdictFrom(data []byte) (reviewVerdict, bool) {
	if len(data) == 0 || data[0] != '{' {
		return reviewVerdict{}, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return reviewVerdict{}, false
	}
	var v reviewVerdict
	if err := json.Unmarshal(obj["approved"], &v.Approved); err != nil || !isBool(obj["approved"]) {
		return reviewVerdict{}, false
	}
	v.Issues = []string{}
	if raw, ok := obj["issues"]; ok && !isNull(raw) {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return reviewVerdict{}, false
		}
		for _, it := range items {
			v.Issues = append(v.Issues, jsonText(it))
		}
	}
	if raw, ok := obj["summary"]; ok && !isNull(raw) {
		v.Summary = text.Truncate(jsonText(raw), maxSummaryChars)
	}
	return v, true
}

// isBool reports whether raw is the JSON literal true or false.
func isBool(raw json.RawMessage) bool {
	s := string(bytes.TrimSpace(raw))
	return s == "true" || s == "false"
}

// isNull reports whether raw is the JSON literal null.
func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// jsonText returns a JSON string's value, or the JSON text of any other value.
func jsonText(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// VerdictSchema is the JSON Schema of the reviewer's verdict, sent as the
// structured-output format of the verdict request.
const VerdictSchema = `{"title":"verdict","type":"object","properties":{"approved":{"type":"boolean"},"summary":{"type":"string"},"issues":{"type":"array","items":{"type":"string"}}},"required":["approved","summary","issues"],"additionalProperties":false}`

// verdictRequest is the user message of the verdict request: the last call
// of a reviewer whose final answer held no parsable verdict, made without
// tools and with [VerdictSchema] as the structured-output format.
const verdictRequest = `Give your verdict now, from what you have read: one JSON object {"approved": true or false, "summary": "...", "issues": ["..."]} and nothing else.`
