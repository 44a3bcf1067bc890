package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"flow/bufferfs"
)

// journalVersion is the format version written into meta.json.
const journalVersion = 1

// meta is a run's meta.json.
type meta struct {
	Version   int    `json:"version"`
	RunID     string `json:"run_id"`
	Task      string `json:"task"`
	Seq       int64  `json:"seq"`
	StartedAt string `json:"started_at"`
	PID       int    `json:"pid"`
	Root      string `json:"root"`
}

// record is one line of a run's log.jsonl. The first record of a path has
// First set and describes the file before the run; every record (the first
// included) gives the hash and mode one write of the run leaves.
type record struct {
	Path  string `json:"path"`
	First bool   `json:"first,omitempty"`
	// Review marks a write a person's review made after the run.
	Review bool `json:"review,omitempty"`
	// Before the run (first record only).
	Existed   bool   `json:"existed,omitempty"`
	OldMode   uint32 `json:"old_mode,omitempty"`
	OldSize   int64  `json:"old_size,omitempty"`
	OldSHA256 string `json:"old_sha256,omitempty"`
	Blob      string `json:"blob,omitempty"`
	// After names the blob that holds the content the run's last write
	// of the path left (first record only; each write replaces it), so
	// that a review can show the run's change after the file moved on.
	After string `json:"after,omitempty"`
	// After this write.
	NewMode   uint32 `json:"new_mode"`
	NewSize   int64  `json:"new_size"`
	NewSHA256 string `json:"new_sha256"`
}

// version is one state a run left a file in.
type version struct {
	sha  string
	mode fs.FileMode
	// review is set for a version a review wrote, not the run.
	review bool
}

// entry is everything the journal knows about one path of a run.
type entry struct {
	path      string
	existed   bool
	oldMode   fs.FileMode
	oldSize   int64
	oldSHA256 string
	blob      string
	after     string // the after blob, "" in journals older than it
	// written lists every version the run's writes were to leave, in
	// order; the last one is what the run finally wrote.
	written []version
}

// readLog parses a run's log. A last line without its newline, or
// unparsable lines after which nothing parses, are the torn tail of a crash
// and are ignored; an invalid record followed by valid ones is corruption.
// Entries are returned sorted by path.
func readLog(runDir string) ([]*entry, error) {
	data, err := os.ReadFile(filepath.Join(runDir, logFile))
	if err != nil {
		return nil, fmt.Errorf("journal: read log: %w", err)
	}
	byPath := map[string]*entry{}
	var bad error
	for lineNo := 1; len(data) > 0; lineNo++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // torn last line
		}
		line := data[:i]
		data = data[i+1:]
		var rec record
		err := json.Unmarshal(line, &rec)
		if err == nil {
			err = rec.apply(byPath)
		}
		if err != nil {
			if bad == nil {
				bad = fmt.Errorf("journal: %s line %d: %w", logFile, lineNo, err)
			}
			continue
		}
		if bad != nil {
			return nil, fmt.Errorf("%w (the journal is damaged; undo refuses to guess)", bad)
		}
	}
	entries := make([]*entry, 0, len(byPath))
	for _, e := range byPath {
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].path < entries[j].path })
	return entries, nil
}

// apply validates rec and adds it to the entries.
func (rec *record) apply(byPath map[string]*entry) error {
	clean, err := bufferfs.ValidPath(rec.Path)
	if err != nil || clean != rec.Path || clean == "." {
		return fmt.Errorf("bad path %q", rec.Path)
	}
	if !isSHA256(rec.NewSHA256) || rec.NewSize < 0 {
		return fmt.Errorf("bad new content hash for %s", rec.Path)
	}
	v := version{sha: rec.NewSHA256, mode: fs.FileMode(rec.NewMode).Perm(), review: rec.Review}
	e := byPath[rec.Path]
	if rec.First && rec.Review {
		return fmt.Errorf("review write of %s recorded as its first record", rec.Path)
	}
	if !rec.First {
		if e == nil {
			return fmt.Errorf("write of %s recorded before its first record", rec.Path)
		}
		e.written = append(e.written, v)
		return nil
	}
	if e != nil {
		return fmt.Errorf("second first record for %s", rec.Path)
	}
	e = &entry{path: rec.Path, existed: rec.Existed, written: []version{v}}
	if rec.After != "" {
		if !validBlobName(rec.After) {
			return fmt.Errorf("bad after blob for %s", rec.Path)
		}
		e.after = rec.After
	}
	if rec.Existed {
		if !isSHA256(rec.OldSHA256) || !validBlobName(rec.Blob) || rec.OldSize < 0 {
			return fmt.Errorf("bad previous content record for %s", rec.Path)
		}
		e.oldMode = fs.FileMode(rec.OldMode).Perm()
		e.oldSize = rec.OldSize
		e.oldSHA256 = rec.OldSHA256
		e.blob = rec.Blob
	}
	byPath[rec.Path] = e
	return nil
}

// isSHA256 reports whether s is a lower-case hex SHA-256.
func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// blobName returns the name of a run's n-th blob.
func blobName(n int) string { return fmt.Sprintf("%06d", n) }

// validBlobName reports whether s is a name blobName produces.
func validBlobName(s string) bool {
	if len(s) < 6 {
		return false
	}
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && blobName(n) == s
}
