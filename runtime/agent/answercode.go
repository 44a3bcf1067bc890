package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"flow/runtime/codeblock"
	"flow/runtime/model"
	"flow/runtime/repomap"
)

// codeCalls turns the code blocks of a coder's answer that changed no
// file into file_edit calls (see package codeblock), one per file the code
// changes, and returns them with the paths they change. The calls are run
// like the model's own, through the same tool, so an unsaved buffer, a
// stale file or a path outside the workspace refuses them in the same way.
func (r *env) codeCalls(ctx context.Context, content string) ([]model.ToolCall, []string) {
	if !r.cfg.Agent.AnswerCode || r.deps.FS == nil || !strings.Contains(content, "```") {
		return nil, nil
	}
	var (
		calls []model.ToolCall
		paths []string
	)
	for _, ch := range codeblock.Changes(content, r.task, r.codeFiles(ctx)) {
		if ch.Old == "" {
			continue // an empty file: nothing for file_edit to match
		}
		old, new := editRegion(ch.Old, ch.New)
		args, err := json.Marshal(map[string]string{"path": ch.Path, "old_string": old, "new_string": new})
		if err != nil {
			continue
		}
		calls = append(calls, model.ToolCall{Name: "file_edit", Arguments: string(args)})
		paths = append(paths, ch.Path)
	}
	return calls, paths
}

// echoes returns the declarations the code blocks of a coder's answer
// give exactly as the workspace has them (codeblock.Echoes), so that the
// reminder after an answer that changed nothing can name them.
func (r *env) echoes(ctx context.Context, content string) []codeblock.Echo {
	if !r.cfg.Agent.AnswerCode || r.deps.FS == nil || !strings.Contains(content, "```") {
		return nil
	}
	return codeblock.Echoes(content, r.task, r.codeFiles(ctx))
}

// testFilesFor returns the test files a test that shows the change to the
// changed files belongs in (codeblock.TestFilesFor), at most three, for
// the repair request of a cycle whose checks do not show the change.
func (r *env) testFilesFor(ctx context.Context, changed []string) []string {
	if r.deps.FS == nil {
		return nil
	}
	var all []string
	for _, f := range r.codeFiles(ctx) {
		all = append(all, f.Path)
	}
	var out []string
	for _, p := range changed {
		for _, t := range codeblock.TestFilesFor(p, all) {
			if len(out) < 3 && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// codeFiles returns the workspace's source files that answer code may
// change, with their current text.
func (r *env) codeFiles(ctx context.Context) []codeblock.File {
	m, err := repomap.Build(ctx, r.deps.FS)
	if err != nil {
		return nil
	}
	var files []codeblock.File
	for _, f := range m.Files {
		if text, ok := f.Text(); ok {
			files = append(files, codeblock.File{Path: f.Path, Language: f.Language, Text: text})
		}
	}
	return files
}

// editRegion returns the smallest run of whole lines of old that, replaced
// by the corresponding lines of new, turns old into new and occurs once in
// old, overlaps counted (so that file_edit matches it exactly, there): the lines that differ, with
// as many unchanged lines around them as that takes. An insertion takes
// the line above it (or below, at the top).
func editRegion(old, new string) (string, string) {
	a, b := strings.SplitAfter(old, "\n"), strings.SplitAfter(new, "\n")
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	lo, hiA, hiB := pre, len(a)-suf, len(b)-suf
	for {
		region := strings.Join(a[lo:hiA], "")
		at := len(strings.Join(a[:lo], ""))
		// Once, counting overlapping matches, and here.
		if region != "" && strings.Index(old, region) == at && strings.LastIndex(old, region) == at {
			return region, strings.Join(b[lo:hiB], "")
		}
		if lo == 0 && hiA == len(a) {
			return old, new
		}
		if lo > 0 {
			lo--
		}
		if hiA < len(a) && (region != "" || lo == 0) {
			hiA++
			hiB++
		}
	}
}
