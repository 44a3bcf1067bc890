package verify

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"flow/bufferfs"
)

// TestFingerprintsOnDisk hashes raw bytes through the real Disk, including
// files the tools could not read whole (over 256 KiB) and invalid UTF-8.
func TestFingerprintsOnDisk(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), 40000) // 640000 bytes
	bin := []byte{0xff, 0xfe, 'a', 0x00}
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("big.go", big)
	write("bin.dat", bin)
	disk, err := bufferfs.NewDisk(dir, bufferfs.DiskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()

	paths := []string{"big.go", "bin.dat", "missing.go"}
	before, err := Fingerprints(t.Context(), disk, paths)
	if err != nil {
		t.Fatalf("Fingerprints() error = %v", err)
	}
	if before["big.go"] != sha(string(big)) || before["bin.dat"] != sha(string(bin)) || before["missing.go"] != "" {
		t.Fatalf("Fingerprints() = %v, want raw-byte hashes and \"\" for the missing file", before)
	}

	// Changes a lossy (decode-with-replacement) or size-capped hash would
	// miss: one invalid byte for another, and the last byte of a big file.
	bin[0] = 0xfd
	write("bin.dat", bin)
	big[len(big)-1] = 'X'
	write("big.go", big)
	after, err := Fingerprints(t.Context(), disk, paths)
	if err != nil {
		t.Fatalf("Fingerprints() error = %v", err)
	}
	if got := Changed(before, after); len(got) != 2 || got[0] != "big.go" || got[1] != "bin.dat" {
		t.Errorf("Changed() = %v, want [big.go bin.dat]", got)
	}

	// A changed file replaced by a symlink is an error, not a silent match.
	if err := os.Remove(filepath.Join(dir, "bin.dat")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("big.go", filepath.Join(dir, "bin.dat")); err != nil {
		t.Fatal(err)
	}
	if _, err := Fingerprints(t.Context(), disk, []string{"bin.dat"}); err == nil {
		t.Errorf("Fingerprints(symlink) succeeded, want an error")
	}
}
