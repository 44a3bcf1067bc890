package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Task is one evaluation task: a folder under the tasks directory.
type Task struct {
	Name       string     `json:"-"`
	Dir        string     `json:"-"`
	Language   string     `json:"language"`
	Kind       string     `json:"kind"`
	Text       string     `json:"task"`
	Possible   *bool      `json:"possible"`
	Acceptance Acceptance `json:"acceptance"`
	// Checks is the operator configuration's checks (flow.toml).
	Checks string `json:"-"`
}

// Acceptance is how the hidden acceptance test is run.
type Acceptance struct {
	Cmd []string `json:"cmd"`
	// TimeoutSec bounds the command; 0 means defaultAcceptanceTimeout.
	TimeoutSec int `json:"timeout_s"`
}

var (
	taskKinds = map[string]bool{
		"fix-failing-test": true, "feature": true, "bug-in-words": true,
		"two-files": true, "impossible": true,
	}
	taskLanguages = map[string]bool{"go": true, "python": true, "javascript": true, "typescript": true}
	taskName      = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	// flow.toml may hold checks and agent settings; the harness owns the
	// workspace and the model server.
	reservedTOML = regexp.MustCompile(`(?m)^\s*(workspace_dir\s*=|\[\s*(ollama|models)\s*\])`)
)

// CanBeDone reports whether the task can be done at all.
func (t *Task) CanBeDone() bool { return t.Possible == nil || *t.Possible }

// LoadTasks reads every task under dir, sorted by name; names, when not
// empty, selects tasks by exact name or by a prefix ending in '*', in the
// order of names.
func LoadTasks(dir string, names []string) ([]*Task, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read the tasks directory: %w", err)
	}
	var tasks []*Task
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "task.json")); err != nil {
			continue
		}
		if len(names) > 0 && !selected(e.Name(), names) {
			continue
		}
		t, err := LoadTask(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, t)
	}
	for _, n := range names {
		found := false
		for _, t := range tasks {
			if selected(t.Name, []string{n}) {
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("no task matches %q in %s", n, dir)
		}
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("no tasks in %s", dir)
	}
	// In the order asked for (the first pattern a task matches), else by name.
	rank := func(t *Task) int {
		for i, n := range names {
			if selected(t.Name, []string{n}) {
				return i
			}
		}
		return 0
	}
	sort.SliceStable(tasks, func(i, j int) bool {
		ri, rj := rank(tasks[i]), rank(tasks[j])
		if ri != rj {
			return ri < rj
		}
		return tasks[i].Name < tasks[j].Name
	})
	return tasks, nil
}

func selected(name string, patterns []string) bool {
	for _, p := range patterns {
		if p == name || (strings.HasSuffix(p, "*") && strings.HasPrefix(name, strings.TrimSuffix(p, "*"))) {
			return true
		}
	}
	return false
}

// LoadTask reads and validates one task folder.
func LoadTask(dir string) (*Task, error) {
	name := filepath.Base(dir)
	fail := func(format string, args ...any) (*Task, error) {
		return nil, fmt.Errorf("task %s: %s", name, fmt.Sprintf(format, args...))
	}
	if !taskName.MatchString(name) {
		return fail("the folder name must match %s", taskName)
	}
	data, err := os.ReadFile(filepath.Join(dir, "task.json"))
	if err != nil {
		return fail("%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	t := &Task{Name: name, Dir: dir}
	if err := dec.Decode(t); err != nil {
		return fail("task.json: %v", err)
	}
	switch {
	case !taskLanguages[t.Language]:
		return fail("task.json: language %q is not one of go, python, javascript, typescript", t.Language)
	case !taskKinds[t.Kind]:
		return fail("task.json: kind %q is not one of fix-failing-test, feature, bug-in-words, two-files, impossible", t.Kind)
	case strings.TrimSpace(t.Text) == "":
		return fail("task.json: task is empty")
	case len(t.Acceptance.Cmd) == 0 || t.Acceptance.Cmd[0] == "":
		return fail("task.json: acceptance.cmd is empty")
	case t.Acceptance.TimeoutSec < 0:
		return fail("task.json: acceptance.timeout_s is negative")
	case (t.Kind == "impossible") == t.CanBeDone():
		return fail("task.json: possible must be false exactly for the kind impossible")
	}
	for _, sub := range []string{"project", "acceptance"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err != nil || !st.IsDir() {
			return fail("no %s/ folder", sub)
		}
	}
	checks, err := os.ReadFile(filepath.Join(dir, "flow.toml"))
	if err != nil {
		return fail("%v", err)
	}
	if reservedTOML.Match(checks) {
		return fail("flow.toml must not set workspace_dir, [ollama] or [models]: the harness writes them")
	}
	t.Checks = string(checks)
	return t, nil
}

// copyTree copies the regular files and directories under src into dst
// (created), skipping the names in skip at any depth. Symbolic links are
// not copied.
func copyTree(src, dst string, skip map[string]bool) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if rel != "." && skip[d.Name()] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			return copyFile(path, target)
		}
		return nil
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, st.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
