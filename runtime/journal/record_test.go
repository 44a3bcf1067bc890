package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/runtime/report"
)

// A crash can leave a torn last record; it is ignored. A damaged record
// followed by good ones is corruption, and undo refuses to act.
func TestReadLogDamage(t *testing.T) {
	tests := []struct {
		name   string
		tail   func(log string) string // appended to the log after the run
		status string
	}{
		{"torn last line", func(string) string { return `{"path":"b.txt","new_sha` }, "ok"},
		{"garbage last line", func(string) string { return "\x00\x00\x00\n" }, "ok"},
		{"invalid record last", func(string) string { return `{"path":"zz.txt","new_sha256":"x"}` + "\n" }, "ok"},
		{"damaged record in the middle", func(string) string {
			valid := fmt.Sprintf(`{"path":"a.txt","new_sha256":%q,"new_mode":420,"new_size":3}`, hashHex([]byte("a2\n")))
			return "{broken\n" + valid + "\n"
		}, "error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			f.put("a.txt", "a0\n", 0o644)
			r := f.begin("run-1")
			f.toolWrite(r, "a.txt", "a1\n")
			r.Finish(report.Run{})
			logPath := filepath.Join(r.dir, logFile)
			data, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(logPath, append(data, tc.tail(string(data))...), 0o600); err != nil {
				t.Fatal(err)
			}
			rep, _ := f.store.Undo(t.Context(), f.disk, "run-1")
			if rep.Status != tc.status {
				t.Fatalf("Undo() = %+v, want status %s", rep, tc.status)
			}
			want := "a0\n"
			if tc.status != "ok" {
				want = "a1\n"
				if !strings.Contains(rep.Message, "damaged") {
					t.Errorf("Undo().Message = %q, want it to say the journal is damaged", rep.Message)
				}
			}
			if got := stateOf(t, f.root, "a.txt").Data; got != want {
				t.Errorf("a.txt = %q, want %q", got, want)
			}
		})
	}
}

func TestRecordValidation(t *testing.T) {
	sha := hashHex(nil)
	tests := []struct {
		name string
		recs []record
	}{
		{"unclean path", []record{{Path: "a/../b", First: true, NewSHA256: sha}}},
		{"root path", []record{{Path: ".", First: true, NewSHA256: sha}}},
		{"bad hash", []record{{Path: "a", First: true, NewSHA256: strings.ToUpper(sha)}}},
		{"write before first", []record{{Path: "a", NewSHA256: sha}}},
		{"two firsts", []record{{Path: "a", First: true, NewSHA256: sha}, {Path: "a", First: true, NewSHA256: sha}}},
		{"existed without blob", []record{{Path: "a", First: true, Existed: true, OldSHA256: sha, NewSHA256: sha}}},
		{"bad blob name", []record{{Path: "a", First: true, Existed: true, OldSHA256: sha, Blob: "../x", NewSHA256: sha}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]*entry{}
			var err error
			for i := range tc.recs {
				if err = tc.recs[i].apply(m); err != nil {
					break
				}
			}
			if err == nil {
				t.Errorf("apply(%+v) = nil, want an error", tc.recs)
			}
		})
	}
}
