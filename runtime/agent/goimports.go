package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"flow/runtime/config"
	"flow/runtime/imports"
	"flow/runtime/lang"
	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
	"flow/runtime/tools"
)

// mendImports mends the imports of the Go files the run changed, once the
// cycle's coder has ended (doc/design.md §6.8): the standard-library
// packages a file uses are imported and the standard imports it does not
// use are removed (package imports). Each mended file is written by a
// file_edit call through the coder's tools, so that an unsaved buffer, a
// stale file or an untrusted run refuses it as it would the model's edit.
// It is the host's call: shown in the run's progress with its diff and
// in the report's host_edits, but not one of the report's events and not
// counted against agent.max_tool_calls.
func (r *run) mendImports(ctx context.Context) {
	if !r.cfg.Agent.GoImports || r.deps.FS == nil {
		return
	}
	var goFiles []string
	for _, p := range r.changedList() {
		if lang.Of(p) == "go" {
			goFiles = append(goFiles, p)
		}
	}
	if len(goFiles) == 0 {
		return
	}
	files := r.codeFiles(ctx)
	for i, p := range goFiles {
		src, found := "", false
		var pkg []string
		for _, f := range files {
			switch {
			case f.Path == p:
				src, found = f.Text, true
			case f.Language == "go" && path.Dir(f.Path) == path.Dir(p):
				pkg = append(pkg, f.Text)
			}
		}
		if !found {
			continue
		}
		fix, ok := imports.Go(src, pkg)
		if !ok {
			continue
		}
		old, new := editRegion(src, fix.Text)
		args, err := json.Marshal(map[string]string{"path": p, "old_string": old, "new_string": new})
		if err != nil {
			continue
		}
		c := model.ToolCall{ID: fmt.Sprintf("imports_%d_%d", r.cycles, i+1), Name: tools.FileEdit, Arguments: string(args)}
		what := "imports: " + importsChange(fix)
		msg := fmt.Sprintf("flow mends the imports of %s: %s", p, importsChange(fix))
		r.emit(progress.Event{Kind: progress.ToolStart, Role: config.RoleCoder, Tool: c.Name, ToolCallID: c.ID, Message: msg})
		t0 := r.deps.Now()
		r.edit.reset()
		res := r.tools.Call(ctx, config.RoleCoder, c)
		var diff *report.FileDiff
		if res.Changed != "" {
			r.changed[res.Changed] = true
			r.writes++
			if res.Status == report.StatusOK {
				diff = r.edit.diffOf(res.Changed)
			}
		}
		r.hostEdits = append(r.hostEdits, report.HostEdit{Cycle: r.cycles, Path: p, What: what, Status: res.Status, Error: res.Error})
		r.emit(progress.Event{
			Kind: progress.ToolEnd, Role: config.RoleCoder, Tool: c.Name, ToolCallID: c.ID,
			Status: res.Status, Error: res.Error, DurationMS: r.deps.Now().Sub(t0).Milliseconds(),
			Message: msg, Diff: diff,
		})
	}
}

// importsChange says what mending a file's imports does.
func importsChange(fix imports.Fix) string {
	var parts []string
	if len(fix.Added) > 0 {
		parts = append(parts, "adds "+quoteList(fix.Added))
	}
	if len(fix.Removed) > 0 {
		parts = append(parts, "removes the unused "+quoteList(fix.Removed))
	}
	return strings.Join(parts, "; ")
}
