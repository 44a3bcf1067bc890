package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/bufferfs"
)

// mapFS is a minimal in-memory bufferfs.FS: only Stat is meaningful.
type mapFS struct {
	bufferfs.FS // nil: any other method panics, which the tests must not reach
	files       map[string][]byte
	fail        map[string]error
}

func (m *mapFS) Stat(_ context.Context, p string) (bufferfs.Info, error) {
	if err := m.fail[p]; err != nil {
		return bufferfs.Info{}, err
	}
	data, ok := m.files[p]
	if !ok {
		return bufferfs.Info{Path: p}, nil
	}
	sum := sha256.Sum256(data)
	return bufferfs.Info{Path: p, Exists: true, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}, nil
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestFingerprints(t *testing.T) {
	fsys := &mapFS{files: map[string][]byte{"a.go": []byte("package a\n"), "bin": {0xff, 0xfe, 0x00}}}
	got, err := Fingerprints(t.Context(), fsys, []string{"a.go", "bin", "gone.go"})
	if err != nil {
		t.Fatalf("Fingerprints() error = %v", err)
	}
	want := map[string]string{"a.go": sha("package a\n"), "bin": sha("\xff\xfe\x00"), "gone.go": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Fingerprints() (-want +got):\n%s", diff)
	}
}

func TestFingerprintsError(t *testing.T) {
	boom := errors.New("symlink refused")
	fsys := &mapFS{files: map[string][]byte{}, fail: map[string]error{"l": boom}}
	if _, err := Fingerprints(t.Context(), fsys, []string{"l"}); !errors.Is(err, boom) {
		t.Errorf("Fingerprints() error = %v, want wrapping %v", err, boom)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Fingerprints(ctx, fsys, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Fingerprints(cancelled) error = %v, want context.Canceled", err)
	}
}

func TestChanged(t *testing.T) {
	before := map[string]string{"a": "1", "b": "2", "c": ""}
	after := map[string]string{"a": "1", "b": "3", "c": "4", "d": ""}
	if diff := cmp.Diff([]string{"b", "c", "d"}, Changed(before, after)); diff != "" {
		t.Errorf("Changed() (-want +got):\n%s", diff)
	}
	if got := Changed(before, before); len(got) != 0 {
		t.Errorf("Changed(same) = %v, want none", got)
	}
}
