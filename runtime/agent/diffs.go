package agent

import (
	"context"
	"sync"
	"time"

	"flow/bufferfs"
	"flow/runtime/diff"
	"flow/runtime/report"
	"flow/runtime/tools"
)

// Bounds of the diffs a run reports: each edit's diff on its tool_end
// event, and all the report's diffs together (each file's is bounded by
// diff.DefaultLimit). A file past the total bound keeps its counts and hunk
// lines with its text cut.
const (
	maxEditDiff    = diff.DefaultLimit
	maxReportDiffs = 64000
	// minDiffRoom is the least room worth spending on one more file's text.
	minDiffRoom = 200
	// diffReadTimeout bounds reading the changed files at the end of a run
	// (an editor-backed FS answers over RPC).
	diffReadTimeout = 10 * time.Second
)

// editCapture remembers the last write a tool call made, so that the call's
// tool_end event can carry that edit's diff.
type editCapture struct {
	mu   sync.Mutex
	path string
	old  bufferfs.File
	data []byte
	set  bool
}

// hook returns a write hook that calls next and, when next lets the write
// go ahead, records the write.
func (c *editCapture) hook(next tools.WriteHook) tools.WriteHook {
	return func(ctx context.Context, path string, old bufferfs.File, data []byte) error {
		if next != nil {
			if err := next(ctx, path, old, data); err != nil {
				return err
			}
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		clean, err := bufferfs.ValidPath(path)
		if err != nil {
			clean = path
		}
		// old.Data belongs to the caller until the hook returns, and data is
		// the content about to be written: both are kept only until the
		// call's tool_end, and copied so the tool may reuse its buffers.
		c.path, c.old, c.data, c.set = clean, old, append([]byte(nil), data...), true
		c.old.Data = append([]byte(nil), old.Data...)
		return nil
	}
}

// reset forgets the recorded write (before each tool call).
func (c *editCapture) reset() {
	c.mu.Lock()
	c.set, c.old, c.data = false, bufferfs.File{}, nil
	c.mu.Unlock()
}

// diffOf returns the diff of the recorded write to path, or nil when the
// call wrote something else or nothing.
func (c *editCapture) diffOf(path string) *report.FileDiff {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.set {
		return nil
	}
	clean, err := bufferfs.ValidPath(path)
	if err != nil || clean != c.path {
		return nil
	}
	d := diff.File(c.path, c.old.Data, c.data, c.old.Exists, true, maxEditDiff)
	return &d
}

// reportDiffs returns the diff of every changed file from its content
// before the run to its content now, read through the run's FS, in the
// order of changed, within maxReportDiffs in total.
func (r *run) reportDiffs(ctx context.Context, changed []string) []report.FileDiff {
	if len(changed) == 0 || r.guard == nil || r.a.deps.FS == nil {
		return []report.FileDiff{}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), diffReadTimeout)
	defer cancel()
	fsys := r.a.deps.FS
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
