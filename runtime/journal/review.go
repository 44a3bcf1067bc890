package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"flow/runtime/report"
)

// reviewFile holds a run's review decisions, one JSON line each.
const reviewFile = "review.jsonl"

// FileChange is what a finished run did to one file, as a review needs it
// (doc/design.md §12.7).
type FileChange struct {
	Path string
	// Existed says whether the file was there before the run; Old is its
	// content then (verified against the recorded hash) and OldMode its
	// mode.
	Existed bool
	Old     []byte
	OldMode fs.FileMode
	// After is the content the run's last write left, AfterSHA256 its
	// hash. After is nil when the journal has no intact copy of it (a
	// journal older than the copies, or a damaged one): then only a file
	// that still holds AfterSHA256 can be reviewed, from its current
	// content.
	After       []byte
	AfterSHA256 string
	AfterMode   fs.FileMode
}

// RunChange is a finished run's change, file by file in path order.
type RunChange struct {
	RunID string
	// Undone is set once `flow undo` restored the run.
	Undone bool
	// Finished is set once the run stored its report.
	Finished bool
	Files    []FileChange
}

// Change reads the change of run runID from its journal. The caller should
// hold the workspace [Lock].
func (s *Store) Change(runID string) (RunChange, error) {
	dir, err := s.runDir(runID)
	if err != nil {
		return RunChange{}, err
	}
	rc := RunChange{RunID: runID}
	if _, err := os.Stat(filepath.Join(dir, undoneFile)); err == nil {
		rc.Undone = true
	}
	if _, err := os.Stat(filepath.Join(dir, reportFile)); err == nil {
		rc.Finished = true
	}
	entries, err := readLog(dir)
	if err != nil {
		return RunChange{}, err
	}
	for _, e := range entries {
		fc := FileChange{Path: e.path, Existed: e.existed, OldMode: e.oldMode}
		if e.existed {
			old, reason := e.oldContent(dir)
			if reason != "" {
				return RunChange{}, fmt.Errorf("journal: %s: %s", e.path, reason)
			}
			fc.Old = old
		}
		last := e.runVersion()
		fc.AfterSHA256, fc.AfterMode = last.sha, last.mode
		if e.after != "" {
			if b, err := os.ReadFile(filepath.Join(dir, blobsDir, e.after)); err == nil && hashHex(b) == last.sha {
				fc.After = b
			}
		}
		rc.Files = append(rc.Files, fc)
	}
	return rc, nil
}

// runVersion is the version the run itself left: the last one written
// before any review write (a review's writes are recorded after the run's,
// each marked as such, so it is the last unmarked one).
func (e *entry) runVersion() version {
	for i := len(e.written) - 1; i >= 0; i-- {
		if !e.written[i].review {
			return e.written[i]
		}
	}
	return e.written[len(e.written)-1]
}

// RecordReviewWrite journals, before it happens, a write a review makes to
// path of run runID, so that `flow undo` still knows every version of the
// file (a review revert leaves content the run never wrote). The caller
// holds the workspace [Lock] and must not write when it returns an error.
func (s *Store) RecordReviewWrite(runID, path string, data []byte, mode fs.FileMode) error {
	dir, err := s.runDir(runID)
	if err != nil {
		return err
	}
	entries, err := readLog(dir)
	if err != nil {
		return err
	}
	known := false
	for _, e := range entries {
		known = known || e.path == path
	}
	if !known {
		return fmt.Errorf("journal: run %s did not change %s", runID, path)
	}
	rec := record{Path: path, Review: true, NewSHA256: hashHex(data), NewSize: int64(len(data)), NewMode: uint32(mode.Perm())}
	return appendLine(filepath.Join(dir, logFile), rec)
}

// AppendDecision appends one review decision of run runID to its
// review.jsonl as one synced line. The caller holds the workspace [Lock].
func (s *Store) AppendDecision(runID string, decision any) error {
	dir, err := s.runDir(runID)
	if err != nil {
		return err
	}
	return appendLine(filepath.Join(dir, reviewFile), decision)
}

// Decisions returns run runID's review decisions in the order they were
// made, each one JSON line; a torn last line is ignored.
func (s *Store) Decisions(runID string) ([][]byte, error) {
	dir, err := s.runDir(runID)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, reviewFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: read the review of run %s: %w", runID, err)
	}
	var lines [][]byte
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return lines, nil
		}
		lines = append(lines, data[:i])
		data = data[i+1:]
	}
}

// SetReview stores rv as the review of run runID in its report, and in the
// workspace's last report when that is the same run, so that `flow status`
// and history show it beside the host's verification. A run without a
// stored report (still running, or crashed) is an error.
func (s *Store) SetReview(runID string, rv *report.Review) error {
	dir, err := s.runDir(runID)
	if err != nil {
		return err
	}
	rep, err := s.Report(runID)
	if err != nil {
		return err
	}
	if rep == nil {
		return fmt.Errorf("journal: run %s has no report yet; it can be reviewed once it has finished", runID)
	}
	rep.Review = rv
	b, err := report.Marshal(*rep)
	if err != nil {
		return fmt.Errorf("journal: store the review of run %s: %w", runID, err)
	}
	if err := writeAtomic(dir, reportFile, b); err != nil {
		return fmt.Errorf("journal: store the review of run %s: %w", runID, err)
	}
	last, err := s.LastReport()
	if err == nil && last != nil && last.RunID == runID {
		if err := writeAtomic(s.dir, lastFile, b); err != nil {
			return fmt.Errorf("journal: store the review of run %s: %w", runID, err)
		}
	}
	return nil
}

// runDir returns the directory of run runID, or an error that says why
// there is none.
func (s *Store) runDir(runID string) (string, error) {
	if err := checkRunID(runID); err != nil {
		return "", fmt.Errorf("journal: %w", err)
	}
	run, ok, err := s.findRun(runID)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("journal: %w", s.missingRun(runID))
	}
	return s.runPath(run), nil
}

// appendLine appends v as one JSON line to the file at path (created 0600)
// and fsyncs it.
func appendLine(path string, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("journal: encode %s: %w", filepath.Base(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("journal: append to %s: %w", filepath.Base(path), err)
	}
	return nil
}
