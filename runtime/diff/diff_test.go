package diff

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/runtime/report"
)

func TestFileModified(t *testing.T) {
	before := "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"
	after := "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"
	got := File("calc.go", []byte(before), []byte(after), true, true, 0)
	want := report.FileDiff{
		Path: "calc.go", Change: report.ChangeModified, Added: 1, Removed: 1,
		Diff:  "--- a/calc.go\n+++ b/calc.go\n@@ -1,5 +1,5 @@\n package calc\n \n func Add(a, b int) int {\n-\treturn a - b\n+\treturn a + b\n }\n",
		Hunks: []int{4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("File (-want +got):\n%s", diff)
	}
}

func TestFileAddedAndDeleted(t *testing.T) {
	added := File("new.go", nil, []byte("package x\n"), false, true, 0)
	if added.Change != report.ChangeAdded || added.Added != 1 || added.Removed != 0 {
		t.Fatalf("added: %+v", added)
	}
	if !strings.HasPrefix(added.Diff, "--- /dev/null\n+++ b/new.go\n") {
		t.Fatalf("added diff headers: %q", added.Diff)
	}
	if diff := cmp.Diff([]int{1}, added.Hunks); diff != "" {
		t.Fatalf("added hunks: %s", diff)
	}
	deleted := File("old.go", []byte("a\nb\n"), nil, true, false, 0)
	if deleted.Change != report.ChangeDeleted || deleted.Removed != 2 || deleted.Added != 0 {
		t.Fatalf("deleted: %+v", deleted)
	}
	if !strings.HasPrefix(deleted.Diff, "--- a/old.go\n+++ /dev/null\n") {
		t.Fatalf("deleted diff headers: %q", deleted.Diff)
	}
}

func TestFileUnchangedHasNoDiff(t *testing.T) {
	got := File("same.go", []byte("x\n"), []byte("x\n"), true, true, 0)
	if got.Diff != "" || got.Added != 0 || got.Removed != 0 || len(got.Hunks) != 0 {
		t.Fatalf("unchanged file: %+v", got)
	}
}

func TestFileHunkLinesFollowEarlierHunks(t *testing.T) {
	var before, after []string
	for i := 1; i <= 40; i++ {
		before = append(before, fmt.Sprintf("line %d", i))
	}
	after = append(after, "inserted 1", "inserted 2")
	after = append(after, before...)
	after[2+29] = "changed 30" // old line 30 is now new line 32
	got := File("f.txt", []byte(strings.Join(before, "\n")+"\n"), []byte(strings.Join(after, "\n")+"\n"), true, true, 0)
	if diff := cmp.Diff([]int{1, 32}, got.Hunks); diff != "" {
		t.Fatalf("hunk lines (-want +got):\n%s\n%s", diff, got.Diff)
	}
	if got.Added != 3 || got.Removed != 1 {
		t.Fatalf("counts: +%d -%d", got.Added, got.Removed)
	}
}

func TestFileDeletionHunkPointsAtFollowingLine(t *testing.T) {
	got := File("f.txt", []byte("a\nb\nc\nd\ne\nf\ng\nh\n"), []byte("a\nb\nc\nd\nf\ng\nh\n"), true, true, 0)
	if diff := cmp.Diff([]int{5}, got.Hunks); diff != "" {
		t.Fatalf("hunk lines (-want +got):\n%s", diff)
	}
}

func TestFileBinary(t *testing.T) {
	got := File("img.png", []byte("\x89PNG\x00\x01"), []byte("\x89PNG\x00\x02"), true, true, 0)
	if !got.Binary || got.Diff != "Binary file img.png differs (6 → 6 bytes)\n" || got.Added != 0 {
		t.Fatalf("binary: %+v", got)
	}
	same := File("img.png", []byte("\x00"), []byte("\x00"), true, true, 0)
	if !same.Binary || same.Diff != "" {
		t.Fatalf("unchanged binary: %+v", same)
	}
}

func TestFileTruncatedAtLineBoundary(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "new line number %d\n", i)
	}
	got := File("big.txt", nil, []byte(b.String()), false, true, 1000)
	if !got.Truncated {
		t.Fatal("a 40 kB diff under a 1000-byte limit is not marked truncated")
	}
	if len(got.Diff) > 1000 {
		t.Fatalf("diff is %d bytes, over the limit", len(got.Diff))
	}
	lines := strings.Split(strings.TrimSuffix(got.Diff, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "… diff cut at 1000 of ") {
		t.Fatalf("last line %q is not the cut marker", last)
	}
	for _, l := range lines[3 : len(lines)-1] {
		if !strings.HasPrefix(l, "+new line number ") {
			t.Fatalf("a line was cut in the middle: %q", l)
		}
	}
	if got.Added != 2000 {
		t.Fatalf("counts describe the whole change: got +%d", got.Added)
	}
}

func TestFileNoNewlineAtEnd(t *testing.T) {
	got := File("f.txt", []byte("a\nb"), []byte("a\nc"), true, true, 0)
	if !strings.Contains(got.Diff, "\\ No newline at end of file") {
		t.Fatalf("missing-newline marker absent:\n%s", got.Diff)
	}
}

// TestFileAppliesWithGit proves the diffs are real unified diffs: git apply
// turns before into after for random edits, including files without a final
// newline, new files and deleted files.
func TestFileAppliesWithGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 40; i++ {
		before, after := randomText(rng), randomText(rng)
		existed, exists := i%10 != 3, i%10 != 5
		if !existed {
			before = ""
		}
		if !exists {
			after = ""
		}
		d := File("f.txt", []byte(before), []byte(after), existed, exists, 1<<20)
		if d.Diff == "" {
			continue
		}
		dir := t.TempDir()
		if existed {
			if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(before), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		patch := filepath.Join(dir, "change.patch")
		if err := os.WriteFile(patch, []byte(d.Diff), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(git, "apply", "--unsafe-paths", "--directory=", "change.patch")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("case %d: git apply: %v\n%s\ndiff:\n%s", i, err, out, d.Diff)
		}
		got, err := os.ReadFile(filepath.Join(dir, "f.txt"))
		if !exists {
			if err == nil {
				t.Fatalf("case %d: deleted file still there", i)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != after {
			t.Fatalf("case %d: applied diff gives %q, want %q", i, got, after)
		}
	}
}

func randomText(rng *rand.Rand) string {
	words := []string{"alpha", "beta", "gamma", "delta", "", "return x", "}"}
	n := rng.Intn(30)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(words[rng.Intn(len(words))])
		if i < n-1 || rng.Intn(4) > 0 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func TestANSI(t *testing.T) {
	in := "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n ctx\n"
	want := "\x1b[1m--- a/x\x1b[0m\n\x1b[1m+++ b/x\x1b[0m\n\x1b[36m@@ -1 +1 @@\x1b[0m\n\x1b[31m-old\x1b[0m\n\x1b[32m+new\x1b[0m\n ctx\n"
	if got := ANSI(in); got != want {
		t.Fatalf("ANSI:\n got %q\nwant %q", got, want)
	}
}

func TestStat(t *testing.T) {
	if got := Stat(report.FileDiff{Added: 3, Removed: 1}); got != "+3 -1" {
		t.Fatalf("Stat = %q", got)
	}
	if got := Stat(report.FileDiff{Binary: true}); got != "binary" {
		t.Fatalf("Stat = %q", got)
	}
}
