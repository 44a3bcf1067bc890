package agent

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"strings"

	"flow/runtime/config"
)

// promptFiles holds the system prompt every role shares and each role's
// instructions. They are compiled into the binary and never read from the
// workspace or the working directory, so a repository cannot rewrite the
// agent's instructions.
//
//go:embed prompts/*.md
var promptFiles embed.FS

// systemPrompt returns the system prompt: one text for every role and
// cycle, so that each conversation starts with the same prefix and the
// model server's prompt cache serves it (doc/design.md §6.5).
func systemPrompt() string {
	b, err := promptFiles.ReadFile("prompts/system.md")
	if err != nil {
		panic("agent: the embedded system prompt is missing: " + err.Error())
	}
	return string(b)
}

// The coder prompt's sentence about code in an answer, as embedded (true
// with agent.answer_code = false) and as it is with answer_code on.
const (
	codeChangesNothing = "Code in your answer changes nothing: only file_edit and file_write change files."
	codeIsApplied      = "If you answer with code instead, put each whole changed function (or the whole file) in a fenced code block: the host applies it with file_edit. Prose changes nothing."
)

// rolePrompt is a role's instructions, the last part of its message;
// answerCode (agent.answer_code) says what the coder is told about code in
// its answer.
func rolePrompt(role string, answerCode bool) (string, error) {
	if role == "system" || strings.Contains(role, ".") {
		return "", fmt.Errorf("instructions of role %q: no such role", role)
	}
	b, err := promptFiles.ReadFile("prompts/" + role + ".md")
	if err != nil {
		return "", fmt.Errorf("instructions of role %q: %w", role, err)
	}
	if answerCode {
		return strings.Replace(string(b), codeChangesNothing, codeIsApplied, 1), nil
	}
	return string(b), nil
}

// instructions are policy p's role instructions: the coder's whole-file
// variant (prompts/coder.whole.md) in that edit format.
func (p policy) instructions() (string, error) {
	if p.whole {
		b, err := promptFiles.ReadFile("prompts/" + p.role + ".whole.md")
		if err != nil {
			return "", fmt.Errorf("instructions of role %q in the whole-file format: %w", p.role, err)
		}
		return string(b), nil
	}
	return rolePrompt(p.role, p.answerCode)
}

// ReviewerPromptVersion names the reviewer's instructions as this binary
// embeds them: the first 12 hex digits of the SHA-256 of the system prompt
// and the reviewer's prompt. A reviewer measurement holds for one version
// (doc/design.md §8.10): a changed prompt is a reviewer not yet measured.
func ReviewerPromptVersion() string {
	h := sha256.New()
	for _, f := range []string{"prompts/system.md", "prompts/" + config.RoleReviewer + ".md"} {
		b, err := promptFiles.ReadFile(f)
		if err != nil {
			panic("agent: the embedded prompt " + f + " is missing: " + err.Error())
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
