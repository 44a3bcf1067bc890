package review

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"flow/bufferfs"
	"flow/internal/text"
	"flow/runtime/report"
)

// All selects every hunk of the run.
const All = "all"

// target is one hunk a decision applies to.
type target struct {
	f *file
	h *hunk
}

// Apply keeps the hunks keep selects and reverts those revert selects. A
// selector is a hunk id, a changed file's path (all its hunks) or [All].
// Every selector is checked before anything is written: one naming no
// hunk, or a hunk both kept and reverted, is an [InputError]. Keeping a
// pending hunk records it; keeping a reverted one applies it again;
// reverting puts the hunk's old lines back. A hunk whose lines changed
// since the run (or since the review's last write) is refused and named
// in the report's conflicts, its file untouched. Each applied decision is
// journalled as it is made.
func (rv *Review) Apply(ctx context.Context, keep, revert []string) (report.ReviewReport, error) {
	keeps, err := rv.resolve(keep)
	if err != nil {
		return report.ReviewReport{}, err
	}
	reverts, err := rv.resolve(revert)
	if err != nil {
		return report.ReviewReport{}, err
	}
	for _, k := range keeps {
		if slices.ContainsFunc(reverts, func(r target) bool { return r.h == k.h }) {
			return report.ReviewReport{}, inputErr("hunk %s is both kept and reverted; choose one", k.h.id)
		}
	}
	var applied []string
	var refused []report.Conflict
	for _, d := range append(tag(keeps, report.HunkKept), tag(reverts, report.HunkReverted)...) {
		if err := ctx.Err(); err != nil {
			return rv.finish(applied, refused), fmt.Errorf("review of run %s interrupted: %w", rv.runID, err)
		}
		reason, err := rv.decide(ctx, d.target, d.state)
		if err != nil {
			return rv.finish(applied, refused), err
		}
		if reason != "" {
			refused = append(refused, report.Conflict{Path: d.f.change.Path, Hunk: d.h.id, Reason: reason})
			continue
		}
		applied = append(applied, d.h.id)
	}
	if len(applied) > 0 {
		rec := rv.record()
		if err := rv.store.SetReview(rv.runID, &rec); err != nil {
			return rv.finish(applied, refused), err
		}
	}
	return rv.finish(applied, refused), nil
}

// decided is a target with the state asked for it.
type decided struct {
	target
	state string
}

// tag gives each target the state asked for it.
func tag(ts []target, state string) []decided {
	out := make([]decided, len(ts))
	for i, t := range ts {
		out[i] = decided{t, state}
	}
	return out
}

// resolve turns selectors into hunks in file order, without repeats.
func (rv *Review) resolve(selectors []string) ([]target, error) {
	var out []target
	seen := map[*hunk]bool{}
	for _, sel := range selectors {
		sel = strings.TrimSpace(sel)
		n := 0
		for _, f := range rv.files {
			for _, h := range f.hunks {
				if sel == All || sel == h.id || sel == f.change.Path {
					n++
					if !seen[h] {
						seen[h] = true
						out = append(out, target{f, h})
					}
				}
			}
		}
		if n == 0 {
			return nil, inputErr("run %s has no hunk or changed file %q (flow review %s --list shows its hunks)", rv.runID, sel, rv.runID)
		}
	}
	return out, nil
}

// decide gives t the state asked, writing the file when that changes its
// lines; it returns why it refused, or an error when the journal failed.
func (rv *Review) decide(ctx context.Context, t target, state string) (string, error) {
	was := rv.stateOf(t.h)
	if was == state {
		return "", nil
	}
	if was == report.HunkReverted || state == report.HunkReverted {
		reason, err := rv.swap(ctx, t.f, t.h, state == report.HunkReverted)
		if reason != "" || err != nil {
			return reason, err
		}
	}
	at := rv.now().UTC().Format(time.RFC3339)
	if err := rv.store.AppendDecision(rv.runID, decision{At: at, By: "person", Hunk: t.h.id, Path: t.f.change.Path, State: state}); err != nil {
		return "", err
	}
	rv.state[t.h.id], rv.at = state, at
	return "", nil
}

// swap replaces the hunk's lines in the file: the run's lines by the old
// ones (revert) or back. It finds them where the review's decisions so far
// put them when the file is exactly as those left it, else as the one
// place in the file that holds them; otherwise it refuses.
func (rv *Review) swap(ctx context.Context, f *file, h *hunk, revert bool) (string, error) {
	path := f.change.Path
	from, to := h.newSide, h.oldSide
	if !revert {
		from, to = to, from
	}
	cur, exists, reason := rv.current(ctx, f, h)
	if reason != "" {
		return reason, nil
	}
	expected, pos := rv.expected(f, h)
	at := -1
	switch {
	case h.whole:
		if exists && cur.Data != nil && string(cur.Data) == from[0] {
			at = 0
		}
	case slices.Equal(splitLines(cur.Data), expected):
		at = pos
	default:
		at = uniqueIndex(splitLines(cur.Data), from)
	}
	if at < 0 {
		return fmt.Sprintf("the lines of hunk %s in %s changed since the run; nothing was written (put them back or edit the file yourself)", h.id, path), nil
	}
	var data []byte
	if h.whole {
		data = []byte(to[0])
	} else {
		lines := splitLines(cur.Data)
		data = []byte(strings.Join(slices.Concat(lines[:at], to, lines[at+len(from):]), ""))
	}
	return rv.put(ctx, f, data, revert && !f.change.Existed && len(data) == 0)
}

// current reads h's file as it is now. A file the run created and a
// revert removed reads as empty; any other missing file is a refusal.
func (rv *Review) current(ctx context.Context, f *file, h *hunk) (bufferfs.File, bool, string) {
	cur, err := rv.fsys.Read(ctx, f.change.Path, 0)
	if err == nil {
		return cur, true, ""
	}
	if errors.Is(err, fs.ErrNotExist) {
		if !f.change.Existed && rv.stateOf(h) == report.HunkReverted {
			return bufferfs.File{}, false, ""
		}
		return bufferfs.File{}, false, fmt.Sprintf("%s was deleted since the run; nothing was written", f.change.Path)
	}
	return bufferfs.File{}, false, fmt.Sprintf("cannot read %s: %v; nothing was written", f.change.Path, err)
}

// put writes data to f's file, or removes the file the run created when
// remove is set, journalling the write first so that flow undo still
// knows the file's versions.
func (rv *Review) put(ctx context.Context, f *file, data []byte, remove bool) (string, error) {
	path := f.change.Path
	if remove {
		if err := rv.fsys.Remove(ctx, path); err != nil {
			return refusal(path, err), nil
		}
		return "", nil
	}
	mode := f.change.AfterMode
	if info, err := rv.fsys.Stat(ctx, path); err == nil && info.Exists {
		mode = info.Mode.Perm()
	}
	if err := rv.store.RecordReviewWrite(rv.runID, path, data, mode); err != nil {
		return "", err
	}
	if _, err := rv.fsys.Write(ctx, path, data, bufferfs.WriteOptions{Mode: mode}); err != nil {
		return refusal(path, err), nil
	}
	return "", nil
}

// refusal says why a write of path was refused.
func refusal(path string, err error) string {
	if errors.Is(err, bufferfs.ErrDirtyBuffer) {
		return path + " has unsaved changes in the editor; nothing was written (save or discard them, then review again)"
	}
	return "writing " + path + " failed: " + err.Error()
}

// expected is f's content as the review's decisions so far leave it,
// and the line where h's lines stand in it.
func (rv *Review) expected(f *file, h *hunk) ([]string, int) {
	after := splitLines(f.after)
	var out []string
	next, pos := 0, -1
	for _, k := range f.hunks {
		start := min(max(k.newIdx, next), len(after))
		out = append(out, after[next:start]...)
		if k == h {
			pos = len(out)
		}
		if rv.stateOf(k) == report.HunkReverted {
			out = append(out, k.oldSide...)
		} else {
			out = append(out, k.newSide...)
		}
		next = min(start+len(k.newSide), len(after))
	}
	return append(out, after[next:]...), pos
}

// uniqueIndex returns where want stands in lines when it stands in exactly
// one place, else -1 (an empty want stands nowhere).
func uniqueIndex(lines, want []string) int {
	if len(want) == 0 {
		return -1
	}
	at := -1
	for i := 0; i+len(want) <= len(lines); i++ {
		if slices.Equal(lines[i:i+len(want)], want) {
			if at >= 0 {
				return -1
			}
			at = i
		}
	}
	return at
}

// finish builds the report of an Apply.
func (rv *Review) finish(applied []string, refused []report.Conflict) report.ReviewReport {
	out := rv.Report()
	out.Applied = applied
	out.Conflicts = append(out.Conflicts, refused...)
	if len(refused) > 0 {
		out.Status = report.StatusConflict
		out.Message = fmt.Sprintf("Refused %s: %s. %s", text.Count(len(refused), "decision"), refused[0].Reason, out.Review.Summary)
	}
	return out
}
