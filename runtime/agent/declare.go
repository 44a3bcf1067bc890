package agent

import (
	"slices"

	"flow/runtime/config"
)

// Where the tools are declared (doc/design.md §6.5): the system prompt
// always lists them with their arguments; "native" also sends their JSON
// schemas in each request's tools field, which the server's chat template
// renders into the prompt (for Qwen2.5 about 970 of the 2,180 tokens of a
// coder's first prompt). A call is read from the reply's text either way
// (§7.4).

// textToolsBelow is the size under which "auto" declares the tools as text
// only: in the evaluation the 1.5B model, offered native declarations,
// wrote all of its 178 calls in 155 runs as text and none in the server's
// tool-call form, while their rendering cost a fresh prompt some 30 s on
// two CPU cores; declared as text, runs took a third less time with as
// many passes within the spread (doc/eval.md §4). Larger models were not
// measured and keep the native form.
const textToolsBelow = 4e9

// resolveToolDeclarations returns whether the tools are declared natively
// and why: agent.tool_declarations when it is "native" or "text"; for
// "auto", text when the server says the coder's model cannot call tools or
// is under textToolsBelow parameters, native otherwise (also when the
// server says nothing).
func (r *env) resolveToolDeclarations(m func() coderModel) (bool, string) {
	switch d := r.cfg.Agent.ToolDeclarations; d {
	case config.ToolsNative, config.ToolsText:
		return d == config.ToolsNative, "agent.tool_declarations = \"" + d + "\""
	}
	cm := m()
	switch {
	case cm.missing != "":
		return true, "auto: " + cm.missing
	case len(cm.info.Capabilities) > 0 && !slices.Contains(cm.info.Capabilities, "tools"):
		return false, "auto: " + cm.name + " has no tool calling"
	case cm.info.ParameterCount > 0 && cm.info.ParameterCount < textToolsBelow:
		return false, "auto: " + cm.name + " is a small model, under 4B parameters"
	case cm.info.ParameterCount == 0:
		return true, "auto: the server does not give the size of " + cm.name
	}
	return true, "auto: " + cm.name + " is not a small model"
}
