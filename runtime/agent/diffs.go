package agent

import (
	"context"
	"time"

	"flow/runtime/diff"
	"flow/runtime/report"
)

// Bounds of the diffs a run reports: each edit's diff on its tool_end
// event, and all the report's diffs together (each file's is bounded by
// diff.DefaultLimit). A file past the total bound keeps its counts and hunk
// lines with its text cut.
const (
	maxReportDiffs = 64000
	// minDiffRoom is the least room worth spending on one more file's text.
	minDiffRoom = 200
	// diffReadTimeout bounds reading the changed files at the end of a run
	// (an editor-backed FS answers over RPC).
	diffReadTimeout = 10 * time.Second
)

// reportDiffs returns the diff of every changed file from its content
// before the run to its content now, read through the run's FS, in the
// order of changed, within maxReportDiffs in total.
func (r *run) reportDiffs(ctx context.Context, changed []string) []report.FileDiff {
	if len(changed) == 0 || r.guard == nil || r.deps.FS == nil {
		return []report.FileDiff{}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), diffReadTimeout)
	defer cancel()
	fsys := r.deps.FS
	out := make([]report.FileDiff, 0, len(changed))
	left := maxReportDiffs
	for _, p := range changed {
		orig, known := r.guard.originals.Original(p)
		var after []byte
		exists := false
		if f, err := fsys.Read(ctx, p, 0); err == nil {
			after, exists = f.Data, true
		} else if info, serr := fsys.Stat(ctx, p); serr == nil && info.Exists {
			// There but unreadable (too large): no text to compare.
			out = append(out, report.FileDiff{Path: p, Change: report.ChangeModified, Truncated: true, Hunks: []int{},
				Diff: "… diff unavailable: " + p + " cannot be read (" + err.Error() + ")\n"})
			continue
		}
		if !known {
			out = append(out, report.FileDiff{Path: p, Change: report.ChangeModified, Truncated: true, Hunks: []int{},
				Diff: "… diff unavailable: the content of " + p + " before the run is unknown\n"})
			continue
		}
		limit := min(diff.DefaultLimit, left)
		if limit < minDiffRoom {
			limit = minDiffRoom // counts and hunks stay whole; the text is a marker
		}
		d := diff.File(p, orig.Data, after, orig.Exists, exists, limit)
		left -= len(d.Diff)
		if left < 0 {
			left = 0
		}
		out = append(out, d)
	}
	return out
}
