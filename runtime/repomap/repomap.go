// Package repomap builds a compact map of a workspace for a model's first
// message: its source files with their top-level symbols, and the files a
// task most likely concerns (named in the task, pointed at by a failing
// check's output, defining a symbol the task names, or the test or source
// partner of one of those).
//
// The symbols are the names of the declarations [lang.Decls] reads: Go
// files are parsed with go/parser, Python and JavaScript/TypeScript files
// are read by their unindented lines for top-level definitions (def,
// class, function, const/let/var, exports). A definition that reading
// does not recognise is simply missing from the map, which only costs the
// model a search. Nothing here runs workspace code.
package repomap

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"flow/bufferfs"
	"flow/runtime/lang"
)

// Limits bound a map.
const (
	maxFiles       = 400   // source files considered
	maxVisited     = 20000 // files visited looking for them
	maxFileBytes   = 65536 // larger files are listed without symbols
	maxSymbolsFile = 24    // symbols listed per file
)

// File is one source file of the map.
type File struct {
	Path     string
	Language string
	Symbols  []string
	Size     int64
	data     []byte
}

// Map is a workspace's source files in path order.
type Map struct {
	Files []File
	// Truncated is true when files were left out (maxFiles, maxVisited).
	Truncated bool
}

// Language returns the language of a source path the map covers ("go",
// "python", "javascript", "typescript"), as [lang.Of] decides it, or ""
// for a path the map does not cover.
func Language(p string) string {
	if l := lang.Of(p); lang.Scans(l) {
		return l
	}
	return ""
}

// Build walks the workspace and maps its source files. Files it cannot
// read are listed without symbols.
func Build(ctx context.Context, fsys bufferfs.FS) (Map, error) {
	var m Map
	visited := 0
	err := fsys.Walk(ctx, ".", func(p string, info bufferfs.Info) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if visited++; visited > maxVisited {
			m.Truncated = true
			return fs.SkipAll
		}
		language := Language(p)
		if language == "" {
			return nil
		}
		if len(m.Files) == maxFiles {
			m.Truncated = true
			return fs.SkipAll
		}
		f := File{Path: p, Language: language, Size: info.Size}
		if info.Size <= maxFileBytes {
			if file, err := read(ctx, fsys, p); err == nil {
				f.data = file.Data
				f.Symbols = Symbols(language, file.Data)
			}
		}
		m.Files = append(m.Files, f)
		return nil
	})
	if err != nil && !errors.Is(err, fs.SkipAll) {
		return m, err
	}
	return m, nil
}

// read reads a file without hashing it when the FS can.
func read(ctx context.Context, fsys bufferfs.FS, p string) (bufferfs.File, error) {
	if u, ok := fsys.(bufferfs.UnhashedReader); ok {
		return u.ReadUnhashed(ctx, p, maxFileBytes)
	}
	return fsys.Read(ctx, p, maxFileBytes)
}

// Render writes the map as one line per file, "path: sym, sym", within
// max characters; files that do not fit are counted at the end.
func (m Map) Render(max int) string {
	var b strings.Builder
	left := 0
	for i, f := range m.Files {
		line := f.Path
		if len(f.Symbols) > 0 {
			line += ": " + strings.Join(f.Symbols, ", ")
		}
		if b.Len()+len(line)+1 > max {
			left = len(m.Files) - i
			break
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	if left > 0 || m.Truncated {
		b.WriteString("(more source files not shown; use file_list)\n")
	}
	return b.String()
}

// Hints are what a task gives away about the files it concerns.
type Hints struct {
	// Task is the task text.
	Task string
	// Output is the output of failing checks (file:line references).
	Output string
	// Paths are files that must come first (for example the changed files).
	Paths []string
}

// Relevant returns the map's files in order of relevance to hints, most
// relevant first: the given paths, files the task names, files the output
// points at, files defining a symbol the task names, then the test or
// source partners of those. Files with no hint are not returned.
func (m Map) Relevant(h Hints) []File {
	byPath := make(map[string]int, len(m.Files))
	for i, f := range m.Files {
		byPath[f.Path] = i
	}
	score := scores{}
	for _, p := range h.Paths {
		if i, ok := byPath[p]; ok {
			score.add(i, 100)
		}
	}
	m.scoreTask(score, h.Task)
	m.scoreOutput(score, h.Output)
	m.scorePartners(score, byPath)
	return m.byScore(score)
}

// scores are the relevance of the hinted files, by index in Map.Files.
type scores map[int]int

// add gives file i the score s unless it has a higher one.
func (sc scores) add(i, s int) {
	if s > sc[i] {
		sc[i] = s
	}
}

// scoreTask scores the files the task names by path (90) or base name
// (80), and those defining a symbol it names (60).
func (m Map) scoreTask(score scores, task string) {
	lower := strings.ToLower(task)
	words := identifiers(task)
	for i, f := range m.Files {
		base := strings.ToLower(path.Base(f.Path))
		switch {
		case strings.Contains(lower, strings.ToLower(f.Path)):
			score.add(i, 90)
		case containsWord(lower, base):
			score.add(i, 80)
		}
		for _, s := range f.Symbols {
			if namesSymbol(words, s) {
				score.add(i, 60)
			}
		}
	}
}

// namesSymbol reports whether words hold the symbol s ("T.Method"), or
// its last part when that is longer than two characters.
func namesSymbol(words map[string]bool, s string) bool {
	name := s
	if j := strings.LastIndexByte(s, '.'); j >= 0 {
		name = s[j+1:]
	}
	return words[s] || (len(name) > 2 && words[name])
}

// scoreOutput scores the files the checks' output points at (70): by
// path, by a path ending in theirs, or by base name alone.
func (m Map) scoreOutput(score scores, output string) {
	for _, ref := range outputRefs(output) {
		for i, f := range m.Files {
			if f.Path == ref || strings.HasSuffix(ref, "/"+f.Path) || (!strings.Contains(ref, "/") && path.Base(f.Path) == ref) {
				score.add(i, 70)
			}
		}
	}
}

// scorePartners gives each file the other hints scored its partners, a
// test file's source and a source file's test, half its score. Only those
// files' own partners: the scores are read before any partner is added,
// so a partner's partner is never scored and the result does not depend
// on the order a map is iterated in.
func (m Map) scorePartners(score scores, byPath map[string]int) {
	hinted := make(map[int]int, len(score))
	maps.Copy(hinted, score)
	for i, s := range hinted {
		for _, p := range partners(m.Files[i].Path) {
			if j, ok := byPath[p]; ok {
				score.add(j, s/2)
			}
		}
	}
}

// byScore returns the scored files, highest score first, then by path.
func (m Map) byScore(score scores) []File {
	idx := make([]int, 0, len(score))
	for i := range score {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool {
		if score[idx[a]] != score[idx[b]] {
			return score[idx[a]] > score[idx[b]]
		}
		return m.Files[idx[a]].Path < m.Files[idx[b]].Path
	})
	out := make([]File, len(idx))
	for k, i := range idx {
		out[k] = m.Files[i]
	}
	return out
}

// Text returns the file's content as read while mapping, and whether it
// was read (files over the size limit were not).
func (f File) Text() (string, bool) {
	return string(f.data), f.data != nil
}

// containsWord reports whether s contains w delimited by non-name
// characters.
func containsWord(s, w string) bool {
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return false
		}
		i += from
		before := i == 0 || !isNameByte(s[i-1])
		after := i+len(w) == len(s) || !isNameByte(s[i+len(w)])
		if before && after {
			return true
		}
		from = i + 1
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == '/' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

var identRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?`)

// identifiers returns the task's identifier-like words, with
// "Type.Method" also split into its parts.
func identifiers(task string) map[string]bool {
	out := map[string]bool{}
	for _, w := range identRE.FindAllString(task, -1) {
		out[w] = true
		if i := strings.IndexByte(w, '.'); i >= 0 {
			out[w[:i]] = true
			out[w[i+1:]] = true
		}
	}
	return out
}

// refRE finds file references in check output: "dir/name.ext:12",
// `File "x.py", line 3` and "(file.js:10:5)", for the extensions of the
// languages the map covers, in any case.
var refRE = regexp.MustCompile(`(?:File "([^"]+)", line \d+)|([A-Za-z0-9_./\\-]+(?i:` + lang.ExtensionPattern(lang.Scans) + `)):\d+`)

// outputRefs returns the distinct file paths output refers to, cleaned of
// a leading "./".
func outputRefs(out string) []string {
	var refs []string
	for _, m := range refRE.FindAllStringSubmatch(out, 200) {
		p := m[1]
		if p == "" {
			p = m[2]
		}
		p = strings.TrimPrefix(path.Clean(strings.ReplaceAll(p, `\`, "/")), "./")
		if !slices.Contains(refs, p) {
			refs = append(refs, p)
		}
	}
	return refs
}

// partners returns the conventional test or source partners of p.
func partners(p string) []string {
	dir, base := path.Split(p)
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	var out []string
	switch Language(p) {
	case "go":
		if s, ok := strings.CutSuffix(stem, "_test"); ok {
			out = append(out, dir+s+ext)
		} else {
			out = append(out, dir+stem+"_test"+ext)
		}
	case "python":
		if s, ok := strings.CutPrefix(stem, "test_"); ok {
			out = append(out, dir+s+ext, path.Join(path.Dir(strings.TrimSuffix(dir, "/")), s+ext))
		} else {
			out = append(out, dir+"test_"+base, dir+"tests/test_"+base)
		}
	default:
		for _, mark := range []string{".test", ".spec"} {
			if s, ok := strings.CutSuffix(stem, mark); ok {
				out = append(out, dir+s+ext)
				for _, e := range []string{".js", ".ts", ".mjs", ".tsx", ".jsx"} {
					out = append(out, dir+s+e)
				}
			} else {
				out = append(out, dir+stem+mark+ext)
			}
		}
	}
	return out
}
