package measure

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"flow/bufferfs"
)

// caseFiles are the labelled changes shipped in the binary: for each task
// of the evaluation set it draws on, cases/TASK/task.txtar (the task's
// text, its flow.toml and its project) and two or more labelled changes,
// cases/TASK/CASE.txtar, copies of eval/reviewer/cases that
// TestEmbeddedCases keeps equal to them (doc/design.md §8.10).
//
//go:embed cases/*/*.txtar
var caseFiles embed.FS

// Labels of a case.
const (
	LabelCorrect = "correct"
	LabelWrong   = "wrong"
)

// Task is one task the cases change: what it asks, the checks of its
// flow.toml and the project as it was before.
type Task struct {
	Name    string
	Text    string
	Config  string // the task's flow.toml: its checks
	Project []File
}

// Case is one labelled change of a task: the whole new text of the files
// it changes, whether it is right (the hidden acceptance test passes) and
// why.
type Case struct {
	Task  *Task
	Name  string
	Label string
	Why   string
	Files []File
}

// ID names the case in progress lines and results: TASK/CASE.
func (c Case) ID() string { return c.Task.Name + "/" + c.Name }

// File is one file of a project or a change.
type File struct {
	Path, Text string
}

// Cases returns the embedded cases, by task and name.
func Cases() ([]Case, error) { return loadCases(caseFiles, "cases") }

// loadCases reads DIR/TASK/task.txtar and DIR/TASK/*.txtar of fsys.
func loadCases(fsys fs.FS, dir string) ([]Case, error) {
	tasks, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []Case
	for _, e := range tasks {
		if !e.IsDir() {
			continue
		}
		t, err := readTask(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		names, err := fs.Glob(fsys, path.Join(dir, e.Name(), "*.txtar"))
		if err != nil {
			return nil, err
		}
		sort.Strings(names)
		n := 0
		for _, name := range names {
			if path.Base(name) == "task.txtar" {
				continue
			}
			data, err := fs.ReadFile(fsys, name)
			if err != nil {
				return nil, err
			}
			c, err := ParseCase(string(data))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			c.Task, c.Name = t, strings.TrimSuffix(path.Base(name), ".txtar")
			out = append(out, c)
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: a task without cases", t.Name)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no reviewer cases")
	}
	return out, nil
}

// readTask reads dir/task.txtar: the header line "task: ..." and the
// sections "flow.toml" and "project/PATH".
func readTask(fsys fs.FS, dir string) (*Task, error) {
	name := path.Join(dir, "task.txtar")
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	header, files, err := splitArchive(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t := &Task{Name: path.Base(dir)}
	for k, v := range header {
		if k != "task" {
			return nil, fmt.Errorf("%s: header %q: want task:", name, k)
		}
		t.Text = v
	}
	for _, f := range files {
		switch p, ok := strings.CutPrefix(f.Path, "project/"); {
		case f.Path == "flow.toml":
			t.Config = f.Text
		case ok:
			t.Project = append(t.Project, File{Path: p, Text: f.Text})
		default:
			return nil, fmt.Errorf("%s: section %q: want flow.toml or project/PATH", name, f.Path)
		}
	}
	if t.Text == "" || t.Config == "" || len(t.Project) == 0 {
		return nil, fmt.Errorf("%s: want a task: line, a flow.toml and the project", name)
	}
	return t, nil
}

// ParseCase reads one case: the header lines "label: correct|wrong" and
// "why: ...", then "-- PATH --" sections, each a file's whole new text.
func ParseCase(data string) (Case, error) {
	var c Case
	header, files, err := splitArchive(data)
	if err != nil {
		return c, err
	}
	for k, v := range header {
		switch k {
		case "label":
			c.Label = v
		case "why":
			c.Why = v
		default:
			return c, fmt.Errorf("header %q: want label: or why:", k)
		}
	}
	c.Files = files
	switch {
	case c.Label != LabelCorrect && c.Label != LabelWrong:
		return c, fmt.Errorf("label %q: want correct or wrong", c.Label)
	case c.Why == "":
		return c, errors.New("no why: line")
	case len(c.Files) == 0:
		return c, errors.New("no file")
	}
	return c, nil
}

// splitArchive splits a txtar-like text into its "key: value" header
// lines and its "-- PATH --" sections; every path is a valid workspace
// path.
func splitArchive(data string) (map[string]string, []File, error) {
	header := map[string]string{}
	var files []File
	var cur *File
	var body strings.Builder
	flush := func() {
		if cur != nil {
			cur.Text = body.String()
			files = append(files, *cur)
		}
	}
	for _, line := range strings.SplitAfter(data, "\n") {
		trimmed := strings.TrimRight(line, "\n")
		if name, ok := strings.CutPrefix(trimmed, "-- "); ok && strings.HasSuffix(name, " --") {
			flush()
			p := strings.TrimSpace(strings.TrimSuffix(name, " --"))
			if _, err := bufferfs.ValidPath(p); err != nil || p == "" {
				return nil, nil, fmt.Errorf("file %q: not a workspace path", p)
			}
			cur = &File{Path: p}
			body.Reset()
			continue
		}
		if cur != nil {
			body.WriteString(line)
			continue
		}
		if strings.TrimSpace(trimmed) == "" {
			continue
		}
		k, v, ok := strings.Cut(trimmed, ":")
		if !ok {
			return nil, nil, fmt.Errorf("header line %q: want KEY: VALUE", trimmed)
		}
		header[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	flush()
	return header, files, nil
}

// Answer is the scripted coder's answer of c: every file whole, in the
// format of flow's whole-file coder (a fence longer than any in a file).
func (c Case) Answer() string {
	var b strings.Builder
	for _, f := range c.Files {
		fence := "```"
		for strings.Contains(f.Text, fence) {
			fence += "`"
		}
		fmt.Fprintf(&b, "%s\n%s\n%s", f.Path, fence, f.Text)
		if !strings.HasSuffix(f.Text, "\n") {
			b.WriteString("\n")
		}
		b.WriteString(fence + "\n\n")
	}
	return b.String()
}
