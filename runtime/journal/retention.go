package journal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Bounds of the evicted-run list: when it grows past maxEvicted ids, the
// oldest are dropped down to keepEvicted.
const (
	maxEvicted  = 2000
	keepEvicted = 1000
)

// staleNew is the age after which a half-created run directory (from a
// process that died inside Begin) is removed.
const staleNew = time.Hour

// prune applies retention: it removes the oldest runs while more than
// MaxRuns are kept or they take more than MaxBytes, never the run named
// keep (the run being recorded). Each run is first renamed aside, so a
// crash never leaves a half-deleted run that undo would read. Removed ids
// are remembered so that undo can say what happened to them.
func (s *Store) prune(keep string) error {
	parent := filepath.Join(s.dir, runsDir)
	s.sweep(parent)
	runs, err := s.listRuns()
	if err != nil {
		return err
	}
	sizes := make([]int64, len(runs))
	var total int64
	for i, r := range runs {
		sizes[i] = dirSize(s.runPath(r))
		total += sizes[i]
	}
	count := len(runs)
	var errs []error
	for i, r := range runs {
		if count <= s.opts.MaxRuns && total <= s.opts.MaxBytes {
			break
		}
		if r.name == keep {
			continue
		}
		aside := filepath.Join(parent, ".evict-"+r.name)
		if err := os.Rename(s.runPath(r), aside); err != nil {
			errs = append(errs, fmt.Errorf("journal: retention: %w", err))
			continue
		}
		count--
		total -= sizes[i]
		if err := s.noteEvicted(r.id); err != nil {
			errs = append(errs, err)
		}
		if err := os.RemoveAll(aside); err != nil {
			errs = append(errs, fmt.Errorf("journal: retention: %w", err))
		}
	}
	if err := syncDir(parent); err != nil {
		errs = append(errs, fmt.Errorf("journal: retention: %w", err))
	}
	return errors.Join(errs...)
}

// sweep removes leftovers of crashed processes: runs renamed aside for
// eviction and old half-created run directories.
func (s *Store) sweep(parent string) {
	des, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, de := range des {
		name := de.Name()
		switch {
		case strings.HasPrefix(name, ".evict-"):
			os.RemoveAll(filepath.Join(parent, name))
		case strings.HasPrefix(name, ".new-"):
			if fi, err := de.Info(); err == nil && time.Since(fi.ModTime()) > staleNew {
				os.RemoveAll(filepath.Join(parent, name))
			}
		}
	}
}

// noteEvicted appends id to the list of runs removed by retention,
// trimming the list when it grows too long.
func (s *Store) noteEvicted(id string) error {
	path := filepath.Join(s.dir, evictedFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("journal: retention: %w", err)
	}
	_, err = f.WriteString(id + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("journal: retention: %w", err)
	}
	ids, err := s.evicted()
	if err != nil || len(ids) <= maxEvicted {
		return err
	}
	kept := strings.Join(ids[len(ids)-keepEvicted:], "\n") + "\n"
	if err := writeAtomic(s.dir, evictedFile, []byte(kept)); err != nil {
		return fmt.Errorf("journal: retention: %w", err)
	}
	return nil
}

// evicted returns the ids of the runs removed by retention, oldest first.
func (s *Store) evicted() ([]string, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, evictedFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: evicted runs: %w", err)
	}
	var ids []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if id := strings.TrimSpace(sc.Text()); id != "" {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// wasEvicted reports whether retention removed the run id.
func (s *Store) wasEvicted(id string) bool {
	ids, _ := s.evicted()
	for _, e := range ids {
		if e == id {
			return true
		}
	}
	return false
}
