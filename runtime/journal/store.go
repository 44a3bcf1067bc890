package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"flow/runtime/report"
)

// Retention defaults (doc/design.md §12).
const (
	DefaultMaxRuns  = 50
	DefaultMaxBytes = 256 << 20
)

// Options bound what a [Store] keeps. Zero fields take the defaults.
type Options struct {
	// MaxRuns is the largest number of runs kept per workspace.
	MaxRuns int
	// MaxBytes bounds the total size of the runs kept per workspace.
	MaxBytes int64
}

// Store is the state of one workspace: its runs, its last report and its
// lock. Several Stores, in one process or many, may be open on one
// workspace; writers serialise through [Store.Lock].
type Store struct {
	state    string // the state directory
	root     string // the workspace root, absolute and symlink-free
	dir      string // the workspace's state directory
	lockPath string
	opts     Options

	// beforeCheck, when set (tests only), runs between flock and the check
	// that the locked file is still the one at the lock path.
	beforeCheck func()
}

// Names inside a workspace directory.
const (
	runsDir     = "runs"
	rootFile    = "root"
	lastFile    = "last.json"
	evictedFile = "evicted"
	metaFile    = "meta.json"
	logFile     = "log.jsonl"
	blobsDir    = "blobs"
	reportFile  = "report.json"
	undoneFile  = "undone.json"
	// transcriptFile holds the model calls of a run with agent.transcript.
	transcriptFile = "transcript.jsonl"
)

// Open opens (creating it 0700 when needed) the state of the workspace at
// root inside stateDir. The workspace is keyed by the root directory's
// identity (device and inode) plus a hash of its path, so a directory
// replaced at the same path gets fresh state.
func Open(stateDir, root string, opts Options) (*Store, error) {
	if opts.MaxRuns < 0 || opts.MaxBytes < 0 {
		return nil, fmt.Errorf("journal: negative retention bound (runs %d, bytes %d)", opts.MaxRuns, opts.MaxBytes)
	}
	if opts.MaxRuns == 0 {
		opts.MaxRuns = DefaultMaxRuns
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if stateDir == "" || root == "" {
		return nil, errors.New("journal: empty state directory or workspace path")
	}
	state, err := filepath.Abs(stateDir)
	if err != nil {
		return nil, fmt.Errorf("journal: state directory %s: %w", stateDir, err)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("journal: workspace %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("journal: workspace %s: %w", root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("journal: workspace %s: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("journal: workspace %s is not a directory", root)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, fmt.Errorf("journal: workspace %s: no device and inode numbers on this system", root)
	}
	id := strconv.FormatUint(uint64(st.Dev), 16) + "-" + strconv.FormatUint(st.Ino, 16)
	sum := sha256.Sum256([]byte(real))
	s := &Store{
		state:    state,
		root:     real,
		dir:      filepath.Join(state, "workspaces", id+"-"+hex.EncodeToString(sum[:6])),
		lockPath: filepath.Join(state, "locks", id+".lock"),
		opts:     opts,
	}
	for _, d := range []string{filepath.Join(state, "locks"), filepath.Join(s.dir, runsDir)} {
		if err := mkdirPrivate(d); err != nil {
			return nil, fmt.Errorf("journal: state directory: %w", err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(s.dir, rootFile)); err != nil || string(b) != real+"\n" {
		if err := writeAtomic(s.dir, rootFile, []byte(real+"\n")); err != nil {
			return nil, fmt.Errorf("journal: state directory: %w", err)
		}
	}
	return s, nil
}

// Root returns the workspace root the Store belongs to (absolute and free
// of symlinks).
func (s *Store) Root() string { return s.root }

// Dir returns the workspace's directory inside the state directory.
func (s *Store) Dir() string { return s.dir }

// Options returns the retention bounds in effect.
func (s *Store) Options() Options { return s.opts }

// runIDPattern is the shape of a run id: it becomes part of a directory
// name, so it is restricted to portable file-name characters.
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// checkRunID reports whether id can name a run.
func checkRunID(id string) error {
	if !runIDPattern.MatchString(id) {
		return fmt.Errorf("invalid run id %q: use 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit", id)
	}
	return nil
}

// runEntry is one run directory.
type runEntry struct {
	seq  int64
	id   string
	name string // directory name under runs/
}

// listRuns returns the runs of the workspace, oldest first. Names that are
// not run directories (temporaries of creation and eviction) are skipped.
func (s *Store) listRuns() ([]runEntry, error) {
	des, err := os.ReadDir(filepath.Join(s.dir, runsDir))
	if err != nil {
		return nil, fmt.Errorf("journal: list runs: %w", err)
	}
	var runs []runEntry
	for _, de := range des {
		name := de.Name()
		if !de.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		seqText, id, ok := strings.Cut(name, "-")
		if !ok || checkRunID(id) != nil {
			continue
		}
		seq, err := strconv.ParseInt(seqText, 10, 64)
		if err != nil || seq <= 0 {
			continue
		}
		runs = append(runs, runEntry{seq: seq, id: id, name: name})
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].seq < runs[j].seq })
	return runs, nil
}

// findRun returns the run with the given id.
func (s *Store) findRun(id string) (runEntry, bool, error) {
	runs, err := s.listRuns()
	if err != nil {
		return runEntry{}, false, err
	}
	for _, r := range runs {
		if r.id == id {
			return r, true, nil
		}
	}
	return runEntry{}, false, nil
}

// runPath returns the directory of a run.
func (s *Store) runPath(r runEntry) string { return filepath.Join(s.dir, runsDir, r.name) }

// LastRunID returns the id of the workspace's most recently started run,
// finished or not, or "" when there is none.
func (s *Store) LastRunID() (string, error) {
	runs, err := s.listRuns()
	if err != nil || len(runs) == 0 {
		return "", err
	}
	return runs[len(runs)-1].id, nil
}

// RunIDs returns the ids of the runs kept for the workspace, oldest first.
func (s *Store) RunIDs() ([]string, error) {
	runs, err := s.listRuns()
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.id
	}
	return ids, nil
}

// LastReport returns the report of the workspace's last finished run, as
// stored by any process, or nil and no error when there is none.
func (s *Store) LastReport() (*report.Run, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, lastFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: last report: %w", err)
	}
	var rep report.Run
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("journal: last report: %w", err)
	}
	return &rep, nil
}

// Report returns the stored report of one run, or nil and no error when the
// run is unknown or has not finished.
func (s *Store) Report(runID string) (*report.Run, error) {
	if err := checkRunID(runID); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	r, ok, err := s.findRun(runID)
	if err != nil || !ok {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(s.runPath(r), reportFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: report of run %s: %w", runID, err)
	}
	var rep report.Run
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("journal: report of run %s: %w", runID, err)
	}
	return &rep, nil
}
