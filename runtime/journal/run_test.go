package journal

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"flow/bufferfs"
	"flow/runtime/report"
)

func TestBeginRejectsBadAndDuplicateIDs(t *testing.T) {
	f := newFixture(t, Options{})
	f.begin("run-1")
	for _, id := range []string{"", ".", "..", "../x", "a/b", "-x", strings.Repeat("x", 129), "run-1"} {
		if _, err := f.store.Begin(id, "t"); err == nil {
			t.Errorf("Begin(%q) = nil error, want a refusal", id)
		}
	}
}

func TestNewRunID(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	a, b := NewRunID(now), NewRunID(now)
	if !regexp.MustCompile(`^20260102T150405Z-[0-9a-f]{8}$`).MatchString(a) || a == b {
		t.Errorf("NewRunID() = %q, %q; want distinct ids of the form 20260102T150405Z-xxxxxxxx", a, b)
	}
	if err := checkRunID(a); err != nil {
		t.Errorf("checkRunID(%q) = %v", a, err)
	}
}

// The journal is durable before the write: right after BeforeWrite the
// blob and the record are on disk (read by a fresh reader).
func TestBeforeWriteRecordsOldContentFirst(t *testing.T) {
	f := newFixture(t, Options{})
	f.put("a.txt", "old\n", 0o600)
	r := f.begin("run-1")
	old, err := f.disk.Read(t.Context(), "a.txt", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.BeforeWrite(t.Context(), "./a.txt", old, []byte("new\n")); err != nil {
		t.Fatalf("BeforeWrite() = %v", err)
	}
	entries, err := readLog(r.dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("readLog() = %v, %v; want one entry", entries, err)
	}
	e := entries[0]
	blob, err := os.ReadFile(filepath.Join(r.dir, blobsDir, e.blob))
	if err != nil || string(blob) != "old\n" {
		t.Errorf("blob = %q, %v; want the old content", blob, err)
	}
	after, err := os.ReadFile(filepath.Join(r.dir, blobsDir, e.after))
	if err != nil || string(after) != "new\n" || e.after == e.blob {
		t.Errorf("after copy %s = %q, %v; want the new content in its own blob", e.after, after, err)
	}
	want := &entry{path: "a.txt", existed: true, oldMode: 0o600, oldSize: 4, oldSHA256: hashHex([]byte("old\n")), blob: e.blob, after: e.after,
		written: []version{{sha: hashHex([]byte("new\n")), mode: 0o600}}}
	if diff := cmp.Diff(want, e, cmp.AllowUnexported(entry{}, version{})); diff != "" {
		t.Errorf("entry (-want +got):\n%s", diff)
	}
	if got := stateOf(t, f.root, "a.txt").Data; got != "old\n" {
		t.Errorf("BeforeWrite wrote the file: %q", got)
	}
}

// TestTranscript: entries are appended as JSON lines to a 0600 file in the
// run's directory, which undo and retention leave alone; a finished run
// refuses more.
func TestTranscript(t *testing.T) {
	f := newFixture(t, Options{})
	r := f.begin("run-1")
	if _, err := os.Stat(filepath.Join(r.dir, transcriptFile)); !os.IsNotExist(err) {
		t.Fatalf("transcript exists before any entry: %v", err)
	}
	for _, e := range []map[string]any{{"turn": 1, "reply": "a\nb"}, {"turn": 2}} {
		if err := r.Transcript(e); err != nil {
			t.Fatalf("Transcript(%v) = %v", e, err)
		}
	}
	if err := r.Transcript(func() {}); err == nil {
		t.Errorf("Transcript of a value JSON cannot encode = nil, want an error")
	}
	if err := r.Finish(report.Run{Status: report.StatusOK}); err != nil {
		t.Fatal(err)
	}
	if err := r.Transcript(map[string]any{"turn": 3}); err == nil || !strings.Contains(err.Error(), "finished") {
		t.Errorf("Transcript after Finish = %v, want a refusal", err)
	}
	path := filepath.Join(r.dir, transcriptFile)
	data, err := os.ReadFile(path)
	if want := "{\"reply\":\"a\\nb\",\"turn\":1}\n{\"turn\":2}\n"; err != nil || string(data) != want {
		t.Errorf("transcript = %q, %v; want %q", data, err, want)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("transcript mode = %v, %v; want 0600", st.Mode(), err)
	}
}

func TestBeforeWriteRefusals(t *testing.T) {
	f := newFixture(t, Options{})
	r := f.begin("run-1")
	ctx := t.Context()
	good := bufferfs.File{Info: bufferfs.Info{Path: "a.txt", Exists: true, Size: 3, SHA256: hashHex([]byte("abc"))}, Data: []byte("abc")}
	bad := good
	bad.Data = []byte("abd")
	short := bufferfs.File{Info: bufferfs.Info{Path: "a.txt", Exists: true, Size: 10}, Data: []byte("abc")}
	tests := []struct {
		name string
		path string
		old  bufferfs.File
	}{
		{"content does not match hash", "a.txt", bad},
		{"content does not match size", "a.txt", short},
		{"content missing", "a.txt", bufferfs.File{Info: good.Info}},
		{"invalid path", "../a.txt", good},
		{"root", ".", good},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := r.BeforeWrite(ctx, tc.path, tc.old, []byte("x")); err == nil {
				t.Errorf("BeforeWrite(%q) = nil, want an error", tc.path)
			}
		})
	}
	if entries, err := readLog(r.dir); err != nil || len(entries) != 0 {
		t.Errorf("readLog() = %v, %v; want nothing journalled", entries, err)
	}
	if err := r.BeforeWrite(ctx, "a.txt", good, []byte("x")); err != nil {
		t.Errorf("BeforeWrite(valid) = %v", err)
	}
	if err := r.Finish(report.Run{}); err != nil {
		t.Fatal(err)
	}
	if err := r.BeforeWrite(ctx, "b.txt", bufferfs.File{}, []byte("x")); err == nil {
		t.Error("BeforeWrite after Finish = nil, want an error")
	}
	if err := r.Finish(report.Run{}); err == nil {
		t.Error("second Finish = nil, want an error")
	}
}

func TestLastReportAcrossStores(t *testing.T) {
	f := newFixture(t, Options{})
	if rep, err := f.store.LastReport(); rep != nil || err != nil {
		t.Fatalf("LastReport() before any run = %v, %v; want nil, nil", rep, err)
	}
	for i, task := range []string{"first", "second"} {
		r := f.begin("run-" + task)
		rep := report.Run{Status: "ok", Verified: i == 1, Task: task, Summary: "done <" + task + ">",
			ChangedFiles: []string{"a.txt"}, Roles: []report.Role{{Role: "coder", Status: "ok"}}}
		if err := r.Finish(rep); err != nil {
			t.Fatal(err)
		}
	}
	// Another process: a second Store on the same workspace.
	other, err := Open(f.state, f.root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := other.LastReport()
	if err != nil || got == nil {
		t.Fatalf("LastReport() = %v, %v", got, err)
	}
	want := report.Run{Status: "ok", Verified: true, Task: "second", RunID: "run-second", Summary: "done <second>",
		ChangedFiles: []string{"a.txt"}, Roles: []report.Role{{Role: "coder", Status: "ok"}}}.Normalize()
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("LastReport() (-want +got):\n%s", diff)
	}
	first, err := other.Report("run-first")
	if err != nil || first == nil || first.Task != "first" {
		t.Errorf("Report(run-first) = %+v, %v; want the first report", first, err)
	}
	if id, err := other.LastRunID(); id != "run-second" || err != nil {
		t.Errorf("LastRunID() = %q, %v; want run-second", id, err)
	}
}

func TestOpen(t *testing.T) {
	base := t.TempDir()
	state := filepath.Join(base, "state")
	root := filepath.Join(base, "ws")
	os.Mkdir(root, 0o755)
	link := filepath.Join(base, "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	s1, err := Open(state, root, Options{})
	if err != nil {
		t.Fatalf("Open() = %v", err)
	}
	s2, err := Open(state, link, Options{})
	if err != nil {
		t.Fatalf("Open(symlink) = %v", err)
	}
	if s1.Dir() != s2.Dir() || s2.Root() != root {
		t.Errorf("Open through a symlink: dir %s, root %s; want %s, %s", s2.Dir(), s2.Root(), s1.Dir(), root)
	}
	for _, d := range []string{state, s1.Dir(), filepath.Join(s1.Dir(), runsDir)} {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("Stat(%s) = %v, %v; want a 0700 directory", d, fi.Mode(), err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(s1.Dir(), rootFile)); string(b) != root+"\n" {
		t.Errorf("root file = %q, want %q", b, root)
	}
	if got := s1.Options(); got != (Options{MaxRuns: 50, MaxBytes: 256 << 20}) {
		t.Errorf("Options() = %+v, want the defaults", got)
	}

	// A directory replaced at the same path gets fresh state.
	// (The old one is removed only afterwards, so its inode is not reused.)
	if err := os.Rename(root, root+".old"); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(root, 0o755)
	defer os.Remove(root + ".old")
	s3, err := Open(state, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s3.Dir() == s1.Dir() {
		t.Errorf("Open(replaced root).Dir() = %s, want a new directory", s3.Dir())
	}

	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct {
		name, state, root string
		opts              Options
	}{
		{"missing root", state, filepath.Join(base, "missing"), Options{}},
		{"root is a file", state, file, Options{}},
		{"empty state", "", root, Options{}},
		{"negative runs", state, root, Options{MaxRuns: -1}},
		{"negative bytes", state, root, Options{MaxBytes: -1}},
	} {
		if _, err := Open(tc.state, tc.root, tc.opts); err == nil {
			t.Errorf("Open(%s) = nil error, want an error", tc.name)
		}
	}
}
