package journal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"flow/bufferfs"
	"flow/runtime/report"
)

// newFileMode is the mode [bufferfs.FS.Write] gives a file it creates
// without WriteOptions.Mode.
const newFileMode fs.FileMode = 0o644

// Run records the writes of one run. Its methods are safe for concurrent
// use. A Run must end with [Run.Finish] (or [Run.Close]).
type Run struct {
	store *Store
	id    string
	dir   string
	name  string // directory name under runs/

	mu       sync.Mutex
	log      *os.File
	logSize  int64
	seen     map[string]bool
	after    map[string]string // path → its after blob
	blobs    int
	broken   error // the log could not be repaired after a failed append
	finished bool
	// transcript is transcript.jsonl, opened by the first Transcript.
	transcript *os.File
}

// NewRunID returns a fresh run id; see [report.NewRunID], the one
// generator.
func NewRunID(now time.Time) string { return report.NewRunID(now) }

// Begin starts recording the run runID (see [NewRunID]) of task: it
// creates the run's journal directory, complete and durable, under the next
// sequence number. The caller should hold the workspace [Lock].
func (s *Store) Begin(runID, task string) (*Run, error) {
	if err := checkRunID(runID); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	runs, err := s.listRuns()
	if err != nil {
		return nil, err
	}
	var seq int64 = 1
	for _, r := range runs {
		if r.id == runID {
			return nil, fmt.Errorf("journal: run id %s is already in the journal", runID)
		}
		seq = r.seq + 1
	}
	parent := filepath.Join(s.dir, runsDir)
	tmp, err := os.MkdirTemp(parent, ".new-")
	if err != nil {
		return nil, fmt.Errorf("journal: begin run %s: %w", runID, err)
	}
	placed := false
	defer func() {
		if !placed {
			os.RemoveAll(tmp)
		}
	}()
	m := meta{
		Version:   journalVersion,
		RunID:     runID,
		Task:      task,
		StartedAt: time.Now().UTC().Format(time.RFC3339Nano),
		PID:       os.Getpid(),
		Root:      s.root,
	}
	if err := prepareRunDir(tmp, &m, seq); err != nil {
		return nil, fmt.Errorf("journal: begin run %s: %w", runID, err)
	}
	// Place the directory under a free sequence number. Another process
	// without the lock could race for the same number; RENAME_NOREPLACE
	// makes one of them move on.
	var name string
	for try := 0; ; try++ {
		name = fmt.Sprintf("%08d-%s", seq, runID)
		err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, filepath.Join(parent, name), unix.RENAME_NOREPLACE)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EEXIST) || try > 100 {
			return nil, fmt.Errorf("journal: begin run %s: %w", runID, err)
		}
		seq++
		m.Seq = seq
		if err := writeMeta(tmp, &m); err != nil {
			return nil, fmt.Errorf("journal: begin run %s: %w", runID, err)
		}
	}
	placed = true
	dir := filepath.Join(parent, name)
	if err := syncDir(parent); err != nil {
		return nil, fmt.Errorf("journal: begin run %s: %w", runID, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, logFile), os.O_WRONLY|os.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("journal: begin run %s: %w", runID, err)
	}
	return &Run{store: s, id: runID, dir: dir, name: name, log: f, seen: map[string]bool{}, after: map[string]string{}}, nil
}

// prepareRunDir fills a new run directory: meta.json, an empty log and the
// blob directory, all durable.
func prepareRunDir(dir string, m *meta, seq int64) error {
	m.Seq = seq
	if err := os.Mkdir(filepath.Join(dir, blobsDir), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, logFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return writeMeta(dir, m)
}

// writeMeta stores meta.json atomically (which also syncs dir).
func writeMeta(dir string, m *meta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return writeAtomic(dir, metaFile, b)
}

// ID returns the run's id.
func (r *Run) ID() string { return r.id }

// BeforeWrite journals one write of the run; it is a tools.WriteHook and
// must be called before the write is applied. old is the file's current
// state (Exists false when absent) with its full content in Data; data is
// the content about to be written. The first time the run touches path,
// the old content is saved; every call records the hash and mode the write
// will leave. When BeforeWrite returns nil the record is durable; when it
// returns an error the write must not happen.
func (r *Run) BeforeWrite(ctx context.Context, path string, old bufferfs.File, data []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	clean, err := bufferfs.ValidPath(path)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if clean == "." {
		return errors.New("journal: cannot journal a write to the workspace root")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return fmt.Errorf("journal: run %s is finished; its writes can no longer be journalled", r.id)
	}
	if r.broken != nil {
		return r.broken
	}
	rec := record{Path: clean, NewSHA256: hashHex(data), NewSize: int64(len(data)), NewMode: uint32(newFileMode)}
	if old.Exists {
		rec.NewMode = uint32(old.Mode.Perm())
	}
	if !r.seen[clean] {
		rec.First = true
		if old.Exists {
			if err := r.saveOld(clean, old, &rec); err != nil {
				return err
			}
		}
		r.blobs++
		rec.After = blobName(r.blobs)
	}
	if err := r.appendRecord(&rec); err != nil {
		return err
	}
	if rec.First {
		r.after[clean] = rec.After
	}
	r.seen[clean] = true
	// The after copy serves reviews only (doc/design.md §12.4): when it
	// cannot be stored the write still happens, and a review finds the
	// copy missing or not matching the last record and says so.
	_ = writeAtomic(filepath.Join(r.dir, blobsDir), r.after[clean], data)
	return nil
}

// saveOld stores the previous content of path as a blob and fills the
// first record's description of it.
func (r *Run) saveOld(path string, old bufferfs.File, rec *record) error {
	if old.Data == nil && (old.Size > 0 || (old.SHA256 != "" && old.SHA256 != hashHex(nil))) {
		return fmt.Errorf("journal: the previous content of %s was not provided (the hook needs the file's full content); the write was not journalled", path)
	}
	sum := hashHex(old.Data)
	if (old.SHA256 != "" && old.SHA256 != sum) || (old.SHA256 == "" && old.Size != int64(len(old.Data))) {
		return fmt.Errorf("journal: the previous content given for %s does not match the file (hash or size differs); the write was not journalled", path)
	}
	r.blobs++
	name := blobName(r.blobs)
	if err := writeAtomic(filepath.Join(r.dir, blobsDir), name, old.Data); err != nil {
		r.blobs--
		return fmt.Errorf("journal: save previous content of %s: %w", path, err)
	}
	rec.Existed = true
	rec.OldMode = uint32(old.Mode.Perm())
	rec.OldSize = int64(len(old.Data))
	rec.OldSHA256 = sum
	rec.Blob = name
	return nil
}

// appendRecord appends rec to the log as one line and fsyncs it. After a
// failure it cuts the log back to its last complete record, so the log
// never holds a damaged record followed by good ones; if even that fails,
// the run refuses further writes.
func (r *Run) appendRecord(rec *record) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("journal: encode record: %w", err)
	}
	line = append(line, '\n')
	n, err := r.log.Write(line)
	if err == nil {
		err = r.log.Sync()
	}
	if err != nil {
		werr := fmt.Errorf("journal: record write of %s: %w", rec.Path, err)
		if terr := r.log.Truncate(r.logSize); terr != nil {
			r.broken = fmt.Errorf("journal: the journal of run %s is damaged (%v); no more writes are allowed", r.id, terr)
		} else if serr := r.log.Sync(); serr != nil {
			r.broken = fmt.Errorf("journal: the journal of run %s is damaged (%v); no more writes are allowed", r.id, serr)
		}
		return werr
	}
	r.logSize += int64(n)
	return nil
}

// Finish ends the run: it stores rep as the run's report and as the
// workspace's last report (read by [Store.LastReport] in any process),
// then applies retention, never removing this run. An empty rep.RunID is
// set to the run's id.
func (r *Run) Finish(rep report.Run) error {
	if err := r.Close(); err != nil {
		return err
	}
	if rep.RunID == "" {
		rep.RunID = r.id
	}
	b, err := report.Marshal(rep)
	if err != nil {
		return fmt.Errorf("journal: store report of run %s: %w", r.id, err)
	}
	if err := writeAtomic(r.dir, reportFile, b); err != nil {
		return fmt.Errorf("journal: store report of run %s: %w", r.id, err)
	}
	if err := writeAtomic(r.store.dir, lastFile, b); err != nil {
		return fmt.Errorf("journal: store report of run %s: %w", r.id, err)
	}
	return r.store.prune(r.name)
}

// Close ends the run without storing a report (Finish calls it). Further
// writes are refused. Closing a finished run is an error.
func (r *Run) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return fmt.Errorf("journal: run %s is already finished", r.id)
	}
	r.finished = true
	var terr error
	if r.transcript != nil {
		terr = r.transcript.Close()
	}
	if err := r.log.Close(); err != nil {
		return fmt.Errorf("journal: close run %s: %w", r.id, err)
	}
	if terr != nil {
		return fmt.Errorf("journal: close the transcript of run %s: %w", r.id, terr)
	}
	return nil
}

// Transcript appends entry to the run's transcript.jsonl as one JSON line,
// creating the file (0600) on first use. The transcript is a record for
// people and is not synced: a crash may lose its last lines, never the
// write journal's. It is refused once the run is finished.
func (r *Run) Transcript(entry any) error {
	line, err := json.Marshal(entry)
	if err != nil {
		return fmt.Errorf("journal: encode transcript entry: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return fmt.Errorf("journal: run %s is finished; its transcript is closed", r.id)
	}
	if r.transcript == nil {
		f, err := os.OpenFile(filepath.Join(r.dir, transcriptFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return fmt.Errorf("journal: open the transcript of run %s: %w", r.id, err)
		}
		r.transcript = f
	}
	if _, err := r.transcript.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("journal: write the transcript of run %s: %w", r.id, err)
	}
	return nil
}

// hashHex returns the lower-case hex SHA-256 of data.
func hashHex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
