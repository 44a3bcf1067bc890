package agent

import (
	"embed"
	"fmt"
)

// promptFiles holds the role system prompts. They are compiled into the
// binary and never read from the workspace or the working directory, so a
// repository cannot rewrite the agent's instructions.
//
//go:embed prompts/*.md
var promptFiles embed.FS

// systemPrompt returns the embedded system prompt of role (planner, coder or
// reviewer).
func systemPrompt(role string) (string, error) {
	b, err := promptFiles.ReadFile("prompts/" + role + ".md")
	if err != nil {
		return "", fmt.Errorf("system prompt of role %q: %w", role, err)
	}
	return string(b), nil
}
