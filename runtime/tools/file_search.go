package tools

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"flow/bufferfs"
	"flow/runtime/report"
)

//go:embed file_search.md
var fileSearchRaw string

var fileSearchDoc = strings.TrimSpace(fileSearchRaw)

// Limits of file_search (SPEC §6, §16).
const (
	maxSearchMatches = 200
	maxMatchChars    = 300
	searchTimeLimit  = 5 * time.Second
	// binarySniff is how much of a file is checked for a NUL byte.
	binarySniff = 8000
	// maxPatternChars bounds a search pattern.
	maxPatternChars = 4096
)

// fileSearchArgs are the arguments of file_search.
type fileSearchArgs struct {
	Pattern string `json:"pattern" desc:"RE2 regular expression matched against each line"`
	Path    string `json:"path,omitempty" desc:"directory or file to search, relative to the workspace root (default \".\")"`
	Glob    string `json:"glob,omitempty" desc:"only files whose name or path matches, e.g. \"*.go\" or \"cmd/**/*.go\""`
	Literal bool   `json:"literal,omitempty" desc:"true to search for pattern as exact text, not a regular expression"`
}

// searchMatch is one matching line.
type searchMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// searchBody is the result of file_search.
type searchBody struct {
	Status       string        `json:"status"`
	Matches      []searchMatch `json:"matches"`
	Truncated    bool          `json:"truncated"`
	FilesScanned int           `json:"files_scanned"`
	Hint         string        `json:"hint,omitempty"`
}

// searcher holds the state of one file_search.
type searcher struct {
	re      *regexp.Regexp
	literal []byte // a substring every match contains, or nil
	glob    *glob
	dir     string
	limit   int // matches to collect before stopping: the cap plus one

	matches  []searchMatch
	scanned  int
	timedOut bool
}

// fileSearch implements file_search.
func (r *Registry) fileSearch(ctx context.Context, args fileSearchArgs) Result {
	pattern := args.Pattern
	if pattern == "" {
		return errorResult(`pattern is empty; give a regular expression such as "func main" or set literal to true to search for exact text`)
	}
	if len([]rune(pattern)) > maxPatternChars {
		return errorf("pattern is longer than %d characters; search for a shorter, distinctive part", maxPatternChars)
	}
	expr := pattern
	if args.Literal {
		expr = regexp.QuoteMeta(pattern)
	}
	if _, err := regexp.Compile(expr); err != nil {
		return errorf("invalid regular expression %q: %v; fix it (RE2 syntax: escape ( ) [ ] { } . * + ? | \\ with a backslash) "+
			"or set literal to true to search for the exact text", cutRunes(pattern, 200), err)
	}
	// (?m): ^ and $ match at line boundaries, as in grep.
	re, err := regexp.Compile("(?m)" + expr)
	if err != nil {
		return errorf("invalid regular expression %q: %v", cutRunes(pattern, 200), err)
	}
	s := &searcher{re: re, literal: requiredLiteral(expr), limit: maxSearchMatches + 1}
	if g := args.Glob; g != "" {
		s.glob, err = compileGlob(g)
		if err != nil {
			return errorf(`invalid glob %q: %v; use a pattern such as "*.go", "src/*.ts" or "**/*_test.go"`, cutRunes(g, 200), err)
		}
	}
	dir := args.Path
	if dir == "" {
		dir = "."
	}
	s.dir = dir
	timeout := r.searchTimeout
	if timeout == 0 {
		timeout = searchTimeLimit
	}
	if err := s.run(ctx, r.fs, time.Now().Add(timeout)); err != nil {
		return fsError(FileSearch, dir, err)
	}
	return s.result(timeout)
}

// fileFound is what searching one file found; idx is its place in the walk.
type fileFound struct {
	idx     int
	scanned bool
	matches []searchMatch
}

// run walks dir (or reads it, when it names a file) and collects matches.
// Files are read and searched by a few workers, since reading is mostly
// waiting on the kernel, but matches are committed in walk order, so the
// result is the same as a sequential search's. The deadline bounds the walk
// itself too, so a tree of empty directories cannot outlast it.
func (s *searcher) run(ctx context.Context, fsys bufferfs.FS, deadline time.Time) error {
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	read := fsys.Read
	if u, ok := fsys.(bufferfs.UnhashedReader); ok {
		read = u.ReadUnhashed
	}
	type job struct {
		idx  int
		path string
	}
	jobs := make(chan job, 64)
	found := make(chan fileFound, 64)
	enough := make(chan struct{}) // closed once the match limit is reached
	var readTimedOut atomic.Bool
	var workers sync.WaitGroup
	for range max(2, runtime.GOMAXPROCS(0)) {
		workers.Go(func() {
			for j := range jobs {
				r := fileFound{idx: j.idx}
				f, err := read(wctx, j.path, bufferfs.MaxFileBytes)
				switch {
				case err == nil:
					r.scanned, r.matches = s.file(j.path, f.Data)
				case wctx.Err() != nil && ctx.Err() == nil:
					readTimedOut.Store(true)
				} // else vanished, grew too large, became a link: skip it
				found <- r
			}
		})
	}
	committed := make(chan struct{})
	go func() {
		defer close(committed)
		pending := map[int]fileFound{}
		next, full := 0, false
		for r := range found {
			pending[r.idx] = r
			for r, ok := pending[next]; ok; r, ok = pending[next] {
				delete(pending, next)
				next++
				if full {
					continue
				}
				if r.scanned {
					s.scanned++
				}
				room := s.limit - len(s.matches)
				s.matches = append(s.matches, r.matches[:min(room, len(r.matches))]...)
				if len(s.matches) >= s.limit {
					full = true
					close(enough)
				}
			}
		}
	}()

	n := 0
	walkErr := fsys.Walk(wctx, s.dir, func(p string, info bufferfs.Info) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if wctx.Err() != nil || !time.Now().Before(deadline) {
			s.timedOut = true
			return fs.SkipAll
		}
		if s.glob != nil && !s.globMatch(p) || info.Size > bufferfs.MaxFileBytes {
			return nil
		}
		select {
		case jobs <- job{n, p}:
			n++
			return nil
		case <-enough:
			return fs.SkipAll
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.timedOut = true
			return fs.SkipAll
		}
	})
	close(jobs)
	workers.Wait()
	close(found)
	<-committed
	if readTimedOut.Load() && len(s.matches) < s.limit {
		s.timedOut = true
	}
	switch {
	case walkErr == nil || errors.Is(walkErr, fs.SkipAll):
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case wctx.Err() != nil:
		s.timedOut = true
		return nil
	}
	// path may name a file rather than a directory: search just that file.
	f, err := fsys.Read(ctx, s.dir, bufferfs.MaxFileBytes)
	if err != nil {
		if errors.Is(err, bufferfs.ErrTooLarge) {
			return err
		}
		return walkErr
	}
	scanned, matches := s.file(f.Path, f.Data)
	if scanned {
		s.scanned++
	}
	s.matches = append(s.matches, matches[:min(s.limit, len(matches))]...)
	return nil
}

// globMatch matches p relative to the workspace root and to the searched
// directory.
func (s *searcher) globMatch(p string) bool {
	if s.glob.match(p) {
		return true
	}
	d := path.Clean(s.dir)
	if d != "." && strings.HasPrefix(p, d+"/") {
		return s.glob.match(p[len(d)+1:])
	}
	return false
}

// file searches one file's content and returns its matches (at most the
// search's limit); binary files are skipped (scanned is false). It is safe
// for concurrent use.
func (s *searcher) file(p string, data []byte) (scanned bool, matches []searchMatch) {
	if bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0 {
		return false, nil
	}
	if s.literal != nil {
		return true, s.scanLiteral(p, data)
	}
	return true, s.scanRegexp(p, data)
}

// scanLiteral finds candidate lines by a substring every match contains,
// then runs the regexp on those lines only.
func (s *searcher) scanLiteral(p string, data []byte) (out []searchMatch) {
	line, counted := 1, 0
	pos := 0
	for pos < len(data) && len(out) < s.limit {
		i := bytes.Index(data[pos:], s.literal)
		if i < 0 {
			return out
		}
		at := pos + i
		start := pos + bytes.LastIndexByte(data[pos:at], '\n') + 1
		end := lineEnd(data, at)
		line += bytes.Count(data[counted:start], []byte{'\n'})
		counted = start
		if s.re.Match(data[start:end]) {
			out = append(out, match(p, line, data[start:end]))
		}
		pos = end + 1
	}
	return out
}

// scanRegexp runs the regexp over the whole remaining content, then checks
// the line of each match on its own, so a match never spans lines.
func (s *searcher) scanRegexp(p string, data []byte) (out []searchMatch) {
	line, counted := 1, 0
	pos := 0
	for pos < len(data) && len(out) < s.limit {
		loc := s.re.FindIndex(data[pos:])
		if loc == nil {
			return out
		}
		at := pos + loc[0]
		start := pos + bytes.LastIndexByte(data[pos:at], '\n') + 1
		if start == len(data) {
			return out // an empty match after the final newline is no line
		}
		end := lineEnd(data, at)
		line += bytes.Count(data[counted:start], []byte{'\n'})
		counted = start
		if s.re.Match(data[start:end]) {
			out = append(out, match(p, line, data[start:end]))
		}
		pos = end + 1
	}
	return out
}

// lineEnd returns the offset of the newline ending the line holding at, or
// len(data).
func lineEnd(data []byte, at int) int {
	if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
		return at + i
	}
	return len(data)
}

// match describes a matching line, cut to maxMatchChars characters.
func match(p string, line int, text []byte) searchMatch {
	text = bytes.TrimSuffix(text, []byte{'\r'})
	if len(text) > maxMatchChars {
		text = text[:runeCut(text, maxMatchChars)]
	}
	return searchMatch{Path: p, Line: line, Text: validText(text)}
}

// runeCut returns the byte offset after at most n runes of b.
func runeCut(b []byte, n int) int {
	count := 0
	for i := range string(b) {
		if count == n {
			return i
		}
		count++
	}
	return len(b)
}

// result builds the bounded tool result.
func (s *searcher) result(timeout time.Duration) Result {
	body := searchBody{Status: report.StatusOK, Matches: s.matches, FilesScanned: s.scanned}
	switch {
	case len(body.Matches) > maxSearchMatches:
		body.Matches = body.Matches[:maxSearchMatches]
		body.Truncated = true
		body.Hint = fmt.Sprintf("stopped at %d matches; narrow the pattern, path or glob to see the rest", maxSearchMatches)
	case s.timedOut:
		body.Truncated = true
		body.Hint = fmt.Sprintf("stopped after %s before every file was searched; narrow path or glob", timeout)
	case len(body.Matches) == 0 && s.scanned == 0:
		body.Hint = "no text files were searched; check path and glob with file_list"
	case len(body.Matches) == 0:
		body.Hint = "no matches; the pattern is an RE2 regular expression (set literal to true for exact text)"
	}
	if body.Matches == nil {
		body.Matches = []searchMatch{}
	}
	content, truncated := fit(report.StatusOK, len(body.Matches), func(keep int) any {
		if keep >= len(body.Matches) {
			return body
		}
		b := body
		b.Matches = body.Matches[:keep]
		b.Truncated = true
		b.Hint = fmt.Sprintf("only %d matches fit in the result; narrow the pattern, path or glob", keep)
		return b
	})
	return Result{Status: report.StatusOK, Content: content, Truncated: truncated}
}

// requiredLiteral returns a case-sensitive substring that every match of
// expr contains (the longest literal of its top-level concatenation), or nil
// when there is none worth using. Searching for it first lets bytes.Index
// skip most of a file before the regexp engine runs.
func requiredLiteral(expr string) []byte {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	lit := longestLiteral(re.Simplify())
	if len(lit) < 2 || strings.ContainsRune(lit, '\n') {
		return nil
	}
	return []byte(lit)
}

// longestLiteral returns the longest case-sensitive literal that re
// requires, looking through captures and concatenations.
func longestLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpCapture:
		return longestLiteral(re.Sub[0])
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return ""
		}
		return string(re.Rune)
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if lit := longestLiteral(sub); len(lit) > len(best) {
				best = lit
			}
		}
		return best
	}
	return ""
}
