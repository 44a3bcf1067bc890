package verify

import (
	"context"
	"slices"
	"strings"

	"flow/runtime/lang"
	"flow/runtime/report"
)

// Coverage statuses and sources.
const (
	// SourceEditor tags coverage that rests on editor evidence only (the
	// reference program's name, kept for its consumers).
	SourceEditor = "rose.editor"

	// ToolEditorLint and ToolEditorDiagnostics name the editor evidence
	// records in a coverage item.
	ToolEditorLint        = "editor_lint"
	ToolEditorDiagnostics = "editor_diagnostics"
)

// staticKinds are the check kinds that count as static analysis.
var staticKinds = map[string]bool{
	"lint":        true,
	"typecheck":   true,
	"diagnostics": true,
}

// failureStatuses are the statuses that veto coverage when an editor result
// carries them, and that coverage gaps never overwrite in a verification.
var failureStatuses = map[string]bool{
	report.StatusFailed:  true,
	report.StatusStale:   true,
	report.StatusError:   true,
	report.StatusTimeout: true,
}

// EditorEvidence gathers editor results for one changed file. A method
// returns nil when the editor does not offer the tool; otherwise it returns
// the editor's result object (with at least "status"). Results are evidence
// only when freshly computed: an implementation must never return cached
// diagnostics as a lint result.
type EditorEvidence interface {
	// Lint runs the editor's native linter on path (editor_lint).
	Lint(ctx context.Context, path string) map[string]any
	// Diagnostics returns the editor's current diagnostics for path
	// (editor_diagnostics).
	Diagnostics(ctx context.Context, path string) map[string]any
}

// Coverage computes the static-analysis coverage of every changed
// non-documentation file (doc/design.md §8.3), sorted by path. checks are the
// results of the current verification; editor may be nil.
//
// A file is covered by a required, passing check of kind lint, typecheck or
// diagnostics whose filetypes contain its language, its dotted extension or
// "*", or by an editor lint result with status "ok" and verified true. An
// editor result with a failure status, or any evidence carrying an
// error-severity diagnostic, vetoes coverage. Diagnostics alone never cover.
func Coverage(ctx context.Context, changed []string, checks []report.CheckResult, editor EditorEvidence) []report.Coverage {
	paths := slices.Clone(changed)
	slices.Sort(paths)
	paths = slices.Compact(paths)
	out := []report.Coverage{}
	for _, p := range paths {
		if p == "" || lang.IsDocumentation(p) {
			continue
		}
		out = append(out, coverFile(ctx, p, checks, editor))
	}
	return out
}

// coverFile computes the coverage item of one file.
func coverFile(ctx context.Context, p string, checks []report.CheckResult, editor EditorEvidence) report.Coverage {
	language, ext := lang.Of(p), lang.Extension(p)
	item := report.Coverage{
		Path:     p,
		Language: language,
		Status:   report.StatusUnverified,
		Source:   SourceEditor,
		Checks:   []string{},
	}
	for _, c := range checks {
		if c.Required && c.Status == report.StatusOK && staticKinds[strings.ToLower(c.Kind)] &&
			filetypeMatches(c.Filetypes, language, ext) {
			item.Checks = append(item.Checks, c.Name)
		}
	}
	lint := evidence(ctx, editor, ToolEditorLint, p)
	diag := evidence(ctx, editor, ToolEditorDiagnostics, p)
	item.Evidence = []map[string]any{lint, diag}

	ok := len(item.Checks) > 0 || (lint["status"] == report.StatusOK && lint["verified"] == true)
	if vetoed(lint) || vetoed(diag) {
		ok = false
	}
	if len(item.Checks) > 0 {
		item.Source = report.SourceCheck
	}
	if ok {
		item.Status = report.StatusOK
	}
	return item
}

// filetypeMatches reports whether a check's filetypes name the language, the
// dotted extension or "*". Comparison ignores case.
func filetypeMatches(filetypes []string, lang, ext string) bool {
	for _, ft := range filetypes {
		ft = strings.TrimSpace(ft)
		switch {
		case ft == "*":
			return true
		case ft != "" && strings.EqualFold(ft, lang):
			return true
		case ext != "" && strings.EqualFold(ft, ext):
			return true
		}
	}
	return false
}

// evidence calls one editor evidence method and returns the recorded object:
// the editor's result plus a "tool" key, or an "unavailable" record.
func evidence(ctx context.Context, editor EditorEvidence, tool, p string) map[string]any {
	var res map[string]any
	if editor != nil {
		if tool == ToolEditorLint {
			res = editor.Lint(ctx, p)
		} else {
			res = editor.Diagnostics(ctx, p)
		}
	}
	if res == nil {
		return map[string]any{"tool": tool, "status": report.StatusUnavailable}
	}
	rec := make(map[string]any, len(res)+1)
	for k, v := range res {
		rec[k] = v
	}
	rec["tool"] = tool
	return rec
}

// vetoed reports whether an editor result denies coverage: a failure status
// (failed, stale, error, timeout) or an error-severity diagnostic.
func vetoed(res map[string]any) bool {
	if s, _ := res["status"].(string); failureStatuses[s] {
		return true
	}
	switch items := res["diagnostics"].(type) {
	case []any:
		for _, it := range items {
			if d, ok := it.(map[string]any); ok && isErrorSeverity(d["severity"]) {
				return true
			}
		}
	case []map[string]any:
		for _, d := range items {
			if isErrorSeverity(d["severity"]) {
				return true
			}
		}
	}
	return false
}

// isErrorSeverity reports whether a diagnostic severity means "error": the
// LSP number 1 (in any numeric type JSON decoding may produce) or the word.
func isErrorSeverity(v any) bool {
	switch s := v.(type) {
	case string:
		return strings.EqualFold(s, "error")
	case float64:
		return s == 1
	case float32:
		return s == 1
	case int:
		return s == 1
	case int64:
		return s == 1
	case int32:
		return s == 1
	case uint64:
		return s == 1
	}
	return false
}
