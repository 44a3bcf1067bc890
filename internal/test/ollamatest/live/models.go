package live

// Model is a deterministic stand-in model: a tiny random-weight Qwen2
// whose every turn is the same reply, written by the model as one token and
// then <|im_end|>. Ollama renders the prompt with [chatTemplate] and parses
// the reply with its own tool-call parser, so what reaches the client is
// what a real Ollama makes of that text.
type Model struct {
	// Name is the name the model is created under.
	Name string
	// Reply is the whole text the model writes on every turn.
	Reply string
	// ContextLength is the model's trained context length
	// (max_position_embeddings, reported by /api/show as
	// qwen2.context_length); 0 means DefaultContextLength.
	ContextLength int
}

// DefaultContextLength is the trained context length of the test models
// unless a model sets its own.
const DefaultContextLength = 32768

// SmallContextLength is the trained context length of [ModelSmallContext].
const SmallContextLength = 2048

// The test models. Each is named for the shape of its reply.
var (
	// ModelText answers with plain text.
	ModelText = Model{Name: "flowtest-text", Reply: "All done: nothing to change."}
	// ModelCall writes one <tool_call> block.
	ModelCall = Model{Name: "flowtest-call", Reply: "<tool_call>\n" + `{"name": "file_read", "arguments": {"path": "calc.go"}}` + "\n</tool_call>"}
	// ModelTwoCalls writes two <tool_call> blocks.
	ModelTwoCalls = Model{Name: "flowtest-two-calls", Reply: "<tool_call>\n" + `{"name": "file_read", "arguments": {"path": "calc.go"}}` + "\n</tool_call>\n" +
		"<tool_call>\n" + `{"name": "file_read", "arguments": {"path": "calc_test.go"}}` + "\n</tool_call>"}
	// ModelStringArgs writes a call whose arguments are a JSON string.
	ModelStringArgs = Model{Name: "flowtest-string-args", Reply: "<tool_call>\n" + `{"name": "file_read", "arguments": "{\"path\": \"calc.go\"}"}` + "\n</tool_call>"}
	// ModelMalformed writes a <tool_call> block whose JSON is cut short.
	ModelMalformed = Model{Name: "flowtest-malformed", Reply: "<tool_call>\n" + `{"name": "file_read", "arguments": {"path": "calc.go"}` + "\n</tool_call>"}
	// ModelUnoffered calls a tool no role is offered.
	ModelUnoffered = Model{Name: "flowtest-unoffered", Reply: "<tool_call>\n" + `{"name": "shell_exec", "arguments": {"command": "make"}}` + "\n</tool_call>"}
	// ModelFenced writes a call as a fenced JSON block, outside any tag.
	ModelFenced = Model{Name: "flowtest-fenced", Reply: "I will read the file first.\n```json\n" + `{"name": "file_read", "arguments": {"path": "calc.go"}}` + "\n```"}
	// ModelBare writes a call as a bare JSON object, outside any tag.
	ModelBare = Model{Name: "flowtest-bare", Reply: `{"name": "file_read", "arguments": {"path": "calc.go"}}`}
	// ModelVerdict answers with a reviewer's approving verdict, which the
	// planner and the coder take as their text answer.
	ModelVerdict = Model{Name: "flowtest-verdict", Reply: `{"approved": true, "summary": "Nothing needed changing.", "issues": []}`}
	// ModelWrite writes calc.go with file_write, in one <tool_call> block:
	// a coder that changes a file.
	ModelWrite = Model{Name: "flowtest-write", Reply: "<tool_call>\n" +
		`{"name": "file_write", "arguments": {"path": "calc.go", "content": "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a + b }\n"}}` + "\n</tool_call>"}
	// ModelSmallContext answers with plain text and was trained on a
	// context of only SmallContextLength tokens.
	ModelSmallContext = Model{Name: "flowtest-small-context", Reply: "Short context.", ContextLength: SmallContextLength}
)

// Models returns every test model, in the order the script creates them.
func Models() []Model {
	return []Model{ModelText, ModelCall, ModelTwoCalls, ModelStringArgs, ModelMalformed,
		ModelUnoffered, ModelFenced, ModelBare, ModelVerdict, ModelWrite, ModelSmallContext}
}

// chatTemplate is a Qwen2.5-style chat template with tools, in Ollama's Go
// template language: the system prompt and the tool signatures in the
// system turn, assistant tool calls as <tool_call> blocks, tool results as
// <tool_response> in a user turn, and an open assistant turn at the end.
// Ollama takes the first text after an {{if .ToolCalls}} ("<tool_call>")
// as the tag that starts a tool call in the model's output; it must be
// written .ToolCalls, on the dot, for Ollama to find it (with $m.ToolCalls
// it falls back to treating any "{" as the start of a call).
const chatTemplate = `{{- if or .System .Tools }}<|im_start|>system
{{- if .System }}
{{ .System }}
{{- end }}
{{- if .Tools }}

# Tools

You may call functions to help with the request. Their signatures are inside <tools></tools>:
<tools>
{{- range .Tools }}
{"type": "function", "function": {{ .Function }}}
{{- end }}
</tools>

To call a function, write a JSON object with its name and arguments inside <tool_call></tool_call>:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>
{{- end }}<|im_end|>
{{ end }}
{{- range $i, $_ := .Messages }}
{{- $last := eq (len (slice $.Messages $i)) 1 }}
{{- if eq .Role "user" }}<|im_start|>user
{{ .Content }}<|im_end|>
{{ else if eq .Role "assistant" }}<|im_start|>assistant
{{ if .Content }}{{ .Content }}
{{- else if .ToolCalls }}<tool_call>
{{ range .ToolCalls }}{"name": "{{ .Function.Name }}", "arguments": {{ .Function.Arguments }}}
{{ end }}</tool_call>
{{- end }}{{ if not $last }}<|im_end|>
{{ end }}
{{- else if eq .Role "tool" }}<|im_start|>user
<tool_response>
{{ .Content }}
</tool_response><|im_end|>
{{ end }}
{{- if and (ne .Role "assistant") $last }}<|im_start|>assistant
{{ end }}
{{- end }}`
