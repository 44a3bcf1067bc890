package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"flow/bufferfs"
	"flow/runtime/codeblock"
	"flow/runtime/config"
	"flow/runtime/model"
)

// The whole-file edit format (doc/design.md §6.7): the coder's answer holds
// the complete new text of each file it changes, in a fenced block named by
// the file's path, and the host writes each such file with file_write.

// maxWholeBytes bounds a file given whole, before and after the change: a
// small model on a CPU writes some ten tokens a second, so a larger file
// is changed with file_edit.
const maxWholeBytes = 8000

// showModel is the part of a backend that describes a model (Ollama's
// /api/show).
type showModel interface {
	ShowModel(ctx context.Context, name string) (model.ModelInfo, error)
}

// coderModel is what the server says about the coder's model, for the
// "auto" settings: its description, or why there is none (the backend
// does not describe models, or the server did not), and its name as a
// report shows it, with the size when the server gives one.
type coderModel struct {
	info    model.ModelInfo
	missing string
	name    string
}

// describeCoderModel asks the server about the coder's model once, and only
// when a setting is "auto".
func (r *env) describeCoderModel(ctx context.Context) coderModel {
	name := r.cfg.ModelFor(config.RoleCoder)
	m := coderModel{name: name}
	b, ok := r.backend(config.RoleCoder).(showModel)
	if !ok {
		m.missing = "the backend does not describe its models"
		return m
	}
	info, err := b.ShowModel(ctx, name)
	if err != nil {
		m.missing = "the server does not describe " + name
		return m
	}
	m.info = info
	if info.ParameterCount > 0 {
		m.name += fmt.Sprintf(" (%.1fB parameters)", float64(info.ParameterCount)/1e9)
	}
	return m
}

// resolveEditFormat returns the coder's edit format and why: agent.edit_format
// when it is "tools" or "whole"; for "auto", whole only when the server says
// the coder's model has no tool calling, tools otherwise. Size does not
// decide: in four real runs a 1.5B model given the whole-file format first
// answered that no change was needed (or copied the example) and passed
// none, while with tool calls and answer code it passed go-stats-median in
// 4 of 6 (doc/eval.md §4). With the worked example of wholeOpening it
// passed 4 of 10 against 2 of 10 for tools in one run, within the run's
// spread and slower; with its instructions in the system message it
// named every file and passed 5 of 12 beside aider's 6, in a run without
// tools. Neither changes the choice (doc/design.md §6.7).
func (r *env) resolveEditFormat(m func() coderModel) (string, string) {
	switch f := r.cfg.Agent.EditFormat; f {
	case config.EditTools, config.EditWhole:
		return f, "agent.edit_format = \"" + f + "\""
	}
	cm := m()
	switch {
	case cm.missing != "":
		return config.EditTools, "auto: " + cm.missing
	case len(cm.info.Capabilities) > 0 && !slices.Contains(cm.info.Capabilities, "tools"):
		return config.EditWhole, "auto: " + cm.name + " has no tool calling"
	case len(cm.info.Capabilities) == 0:
		return config.EditTools, "auto: the server does not say whether " + cm.name + " calls tools"
	}
	return config.EditTools, "auto: " + cm.name + " calls tools"
}

// exampleAnswerMark divides prompts/coder.whole.example.md into the
// example's request and its answer.
const exampleAnswerMark = "\n--- answer ---\n"

// wholeExample returns the worked example of the whole-file format: the
// request, and the answer that gives the changed file whole after its
// path.
func wholeExample() (request, answer string) {
	b, err := promptFiles.ReadFile("prompts/coder.whole.example.md")
	if err != nil {
		panic("agent: the embedded whole-file example is missing: " + err.Error())
	}
	request, answer, ok := strings.Cut(string(b), exampleAnswerMark)
	if !ok {
		panic("agent: the embedded whole-file example has no answer")
	}
	return strings.TrimSpace(request), strings.TrimSpace(answer)
}

// wholeReminder ends a whole-file coder's message and its reminders,
// after what to do now: the reply's format said again, last, as aider
// ends its whole-file requests. Told the format only in the middle of
// its message, the 1.5B coder wrote its files under sentences ("Here's
// the updated `arrays.js`:") instead of their paths (doc/eval.md §4).
const wholeReminder = "Give every file you change as its path on a line of its own, then the whole file in a fenced code block: every line of it, nothing left out."

// Acknowledgements of the whole-file opening's turns.
const (
	wholeExampleNext = "This workspace's files, as the run found them:"
	wholeFilesAck    = "Ok. I will give each file I change whole, its path on a line of its own before its block."
)

// wholeOpening is what a whole-file coder's conversation holds between the
// system prompt and its message (doc/design.md §6.7): the worked example
// as a request and its answer, then the workspace's files in a user turn
// of their own, acknowledged, so that the message itself begins with the
// task. Without a listing (agent.brief_chars = 0) only the example.
// aider opens its whole-file chats this way, and with it the 1.5B model
// names every file it writes (doc/eval.md §4).
func wholeOpening(listing string) []model.Message {
	request, answer := wholeExample()
	out := []model.Message{
		{Role: model.RoleUser, Content: request},
		{Role: model.RoleAssistant, Content: answer},
	}
	if listing != "" {
		out = append(out,
			model.Message{Role: model.RoleUser, Content: wholeExampleNext + "\n\n" + strings.TrimSpace(listing) + "\n"},
			model.Message{Role: model.RoleAssistant, Content: wholeFilesAck})
	}
	return out
}

// isExampleFile reports whether a whole-file block is the worked example's
// own file: a coder that copies the example would otherwise create it.
func isExampleFile(w codeblock.Whole) bool {
	for _, e := range exampleFiles() {
		if e.Path == w.Path && e.Text == w.Text {
			return true
		}
	}
	return false
}

// exampleFiles are the whole-file blocks of the worked example's answer,
// parsed once.
var exampleFiles = sync.OnceValue(func() []codeblock.Whole {
	_, answer := wholeExample()
	return codeblock.WholeFiles(answer, func(string) (string, bool) { return "", false })
})

// wholeReader returns the current text of a file a whole-file block
// names, read once per answer (exists false: no such file, or an invalid
// path); a file over maxWholeBytes stands as a text of that length.
func wholeReader(ctx context.Context, fsys bufferfs.FS) func(p string) (string, bool) {
	current := map[string]string{}
	return func(p string) (string, bool) {
		if text, ok := current[p]; ok {
			return text, true
		}
		clean, err := bufferfs.ValidPath(p)
		if err != nil {
			return "", false
		}
		f, err := fsys.Read(ctx, clean, maxWholeBytes+1)
		if err != nil && !errors.Is(err, bufferfs.ErrTooLarge) || err == nil && !f.Exists {
			return "", false
		}
		if err != nil {
			current[p] = strings.Repeat(" ", maxWholeBytes+1) // stands for a file too large
			return current[p], true
		}
		current[p] = string(f.Data)
		return current[p], true
	}
}

// wholeEchoes returns the files whose whole-file block in a coder's answer
// is the file as it already is, so that the reminder after an answer that
// changed nothing can name them (doc/design.md §6.6).
func (r *env) wholeEchoes(ctx context.Context, content string) []codeblock.Echo {
	if r.deps.FS == nil || !strings.Contains(content, "```") {
		return nil
	}
	old := wholeReader(ctx, r.deps.FS)
	var out []codeblock.Echo
	for _, w := range codeblock.WholeFiles(content, old) {
		if prev, exists := old(w.Path); exists && prev == w.Text {
			out = append(out, codeblock.Echo{Path: w.Path})
		}
	}
	return out
}

// wholeCalls: in the whole-file format, each fenced block of the answer
// named by a path becomes a file_write call of its text, run through the
// same tool as the model's own calls (so confinement, unsaved buffers,
// freshness and the journal treat it alike). A block for a file over
// maxWholeBytes, or one that leaves code out ("// ... rest unchanged"), is
// refused with the reason; so is, once per file and invocation, a block
// that leaves out definitions or tests the file has (leftOut). A block
// equal to the file is no change.
func wholeCalls(ctx context.Context, s *session, resp model.Response) (extraction, bool) {
	content := resp.Message.Content
	if !strings.Contains(content, "```") || s.r.deps.FS == nil {
		return extraction{}, false
	}
	old := wholeReader(ctx, s.r.deps.FS)
	var ex extraction
	ex.source = fromCode
	for _, w := range codeblock.WholeFiles(content, old) {
		prev, exists := old(w.Path)
		var refuse string
		switch {
		case w.Elided != "":
			refuse = fmt.Sprintf("The block for %s leaves code out (%q), and the host writes the block as the whole file: give every line of the file, or change it with file_edit.", w.Path, w.Elided)
		case exists && len(prev) > maxWholeBytes:
			refuse = fmt.Sprintf("%s is larger than %d bytes, too large to write whole: change it with file_edit.", w.Path, maxWholeBytes)
		case len(w.Text) > maxWholeBytes:
			refuse = fmt.Sprintf("The block for %s is larger than %d bytes: write a smaller file, or change it with file_edit.", w.Path, maxWholeBytes)
		case exists && prev == w.Text:
			continue // the file as it is: no change
		case exists && !s.leftOutTold[w.Path]:
			if missing := s.leftOut(w.Path, prev, w.Text); missing != "" {
				if s.leftOutTold == nil {
					s.leftOutTold = map[string]bool{}
				}
				s.leftOutTold[w.Path] = true
				refuse = fmt.Sprintf("The block for %s leaves out %s, which the file has now, and the host writes the block as the whole file: that would delete it. Give %s whole again, with everything it has now and your change (to delete something on purpose, use file_edit).", w.Path, missing, w.Path)
			}
		case !exists && isExampleFile(w):
			refuse = fmt.Sprintf("%s is the example's file, from another project: give the files of this workspace that the task changes.", w.Path)
		}
		args, err := json.Marshal(map[string]string{"path": w.Path, "content": w.Text})
		if err != nil {
			continue
		}
		if refuse != "" {
			if ex.refused == nil {
				ex.refused = map[int]string{}
			}
			ex.refused[len(ex.calls)] = refuse
		} else {
			ex.paths = append(ex.paths, w.Path)
		}
		ex.calls = append(ex.calls, model.ToolCall{Name: "file_write", Arguments: string(args)})
	}
	return ex, len(ex.calls) > 0
}
