package measure

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite cases/ from eval/tasks and eval/reviewer/cases")

// embedded are the cases the binary ships: a correct and a wrong change of
// each of seven tasks in three languages. The wrong ones pass the task's
// checks and fail its hidden acceptance test (eval/harness's
// TestReviewerCases holds every label to that with the real checks).
var embedded = map[string][]string{
	"go-textutil-reverse": {"correct-rune-slice", "wrong-reverses-bytes"},
	"go-stats-median":     {"correct-average-middles", "wrong-sorts-input-in-place"},
	"go-inventory-remove": {"correct-check-before-subtract", "wrong-refuses-exact-stock"},
	"js-chunk":            {"correct-slice-loop", "wrong-drops-short-last-piece"},
	"js-camel-case":       {"correct-split-filter", "wrong-keeps-later-word-case"},
	"py-slugify":          {"correct-sub-and-strip", "wrong-deletes-punctuation"},
	"py-parse-duration":   {"correct-multi-digit-regex", "wrong-sums-digits"},
}

// TestEmbeddedCases keeps cases/ equal to what it copies from the
// evaluation set: the task's text, flow.toml and project, and each case
// byte for byte. go test ./runtime/measure -update rewrites it.
func TestEmbeddedCases(t *testing.T) {
	root := filepath.Join("..", "..", "eval")
	want := map[string]string{}
	for task, cases := range embedded {
		dir := filepath.Join(root, "tasks", task)
		var meta struct {
			Task string `json:"task"`
		}
		data, err := os.ReadFile(filepath.Join(dir, "task.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &meta); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		b.WriteString("task: " + meta.Task + "\n")
		toml, err := os.ReadFile(filepath.Join(dir, "flow.toml"))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("-- flow.toml --\n" + string(toml))
		var paths []string
		err = filepath.WalkDir(filepath.Join(dir, "project"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(filepath.Join(dir, "project"), p)
				paths = append(paths, filepath.ToSlash(rel))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(paths)
		for _, p := range paths {
			data, err := os.ReadFile(filepath.Join(dir, "project", p))
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("-- project/" + p + " --\n" + string(data))
		}
		want[task+"/task.txtar"] = b.String()
		for _, c := range cases {
			data, err := os.ReadFile(filepath.Join(root, "reviewer", "cases", task, c+".txtar"))
			if err != nil {
				t.Fatal(err)
			}
			want[task+"/"+c+".txtar"] = string(data)
		}
	}
	if *update {
		os.RemoveAll("cases")
		for name, body := range want {
			os.MkdirAll(filepath.Join("cases", filepath.Dir(name)), 0o755)
			if err := os.WriteFile(filepath.Join("cases", name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, _ := filepath.Glob(filepath.Join("cases", "*", "*.txtar"))
	if len(got) != len(want) {
		t.Errorf("cases/ holds %d files, want %d (go test ./runtime/measure -update)", len(got), len(want))
	}
	for name, body := range want {
		data, err := os.ReadFile(filepath.Join("cases", name))
		if err != nil || string(data) != body {
			t.Errorf("cases/%s differs from the evaluation set (go test ./runtime/measure -update)", name)
		}
	}
	cs, err := Cases()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]int{}
	langs := map[string]bool{}
	for _, c := range cs {
		labels[c.Label]++
		langs[strings.SplitN(c.Task.Name, "-", 2)[0]] = true
	}
	if labels[LabelCorrect] != labels[LabelWrong] || len(cs) < 12 || len(langs) < 3 {
		t.Errorf("the embedded cases: %v in %d languages, want as many correct as wrong, at least 12, 3 languages", labels, len(langs))
	}
}
