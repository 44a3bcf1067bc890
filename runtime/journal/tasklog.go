package journal

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"flow/internal/text"
)

// A task that runs in a worker process of its own has a log beside its
// record, <id>.log: the worker's stderr, where its diagnostics and, if it
// crashes, the Go runtime's last words go. It is removed with the record,
// or at once when the worker leaves it empty.

// maxLogTail is how much of the end of a log [Tasks.LogTail] reads.
const maxLogTail = 1 << 20

// orphanLogAge is how old a log without a record must be to be removed.
const orphanLogAge = time.Hour

// LogPath is the path of task id's worker log.
func (t *Tasks) LogPath(id string) string { return filepath.Join(t.dir, id+".log") }

// CreateLog creates task id's worker log, empty and private, for the
// worker's stderr. It fails when the log exists.
func (t *Tasks) CreateLog(id string) (*os.File, error) {
	if !taskIDPattern.MatchString(id) {
		return nil, ErrTaskNotFound
	}
	return os.OpenFile(t.LogPath(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
}

// RemoveEmptyLog removes task id's worker log when nothing was written to it.
func (t *Tasks) RemoveEmptyLog(id string) {
	if !taskIDPattern.MatchString(id) {
		return
	}
	if fi, err := os.Lstat(t.LogPath(id)); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		os.Remove(t.LogPath(id))
	}
}

// LogTail returns the line of task id's worker log that says most about how
// the worker ended: its first "panic:" or "fatal error:" line (the Go
// runtime's), else its last nonempty line; "" for an empty or missing log.
func (t *Tasks) LogTail(id string) string {
	if !taskIDPattern.MatchString(id) {
		return ""
	}
	f, err := os.OpenFile(t.LogPath(id), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxLogTail {
		_, _ = f.Seek(-maxLogTail, io.SeekEnd)
	}
	b, _ := io.ReadAll(io.LimitReader(f, maxLogTail))
	last := ""
	for _, line := range bytes.Split(b, []byte("\n")) {
		l := strings.TrimSpace(string(line))
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") {
			return text.ClipBytes(l, 300)
		}
		if l != "" {
			last = l
		}
	}
	return text.ClipBytes(last, 300)
}

// pruneLogs removes the logs of removed records and of records never
// written (a worker that died before its first record), once they are an
// hour old. The caller holds t.mu.
func (t *Tasks) pruneLogs(names []os.DirEntry) {
	records := map[string]bool{}
	for _, e := range names {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			records[id] = true
		}
	}
	now := t.now()
	for _, e := range names {
		id, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok || !taskIDPattern.MatchString(id) || records[id] {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > orphanLogAge {
			os.Remove(filepath.Join(t.dir, e.Name()))
		}
	}
}
