package tools

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"sync"
	"time"

	"flow/bufferfs"
	"flow/internal/text"
	"flow/runtime/report"
)

//go:embed file_search.md
var fileSearchRaw string

var fileSearchDoc = strings.TrimSpace(fileSearchRaw)

// Limits of file_search (doc/design.md §5, §16).
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
	literal []byte  // a substring every match contains, or nil
	find    *finder // finds literal
	glob    *glob
	dir     string
	limit   int // matches to collect before stopping: the cap plus one

	matches  []searchMatch
	scanned  int
	timedOut bool
	binary   []string // binary files with a matching line, in walk order
	skipped  []string // "path (reason)" of files not or not fully searched
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
			"or set literal to true to search for the exact text", text.Truncate(pattern, 200), err)
	}
	// (?m): ^ and $ match at line boundaries, as in grep.
	re, err := regexp.Compile("(?m)" + expr)
	if err != nil {
		return errorf("invalid regular expression %q: %v", text.Truncate(pattern, 200), err)
	}
	s := &searcher{re: re, literal: requiredLiteral(expr), limit: maxSearchMatches + 1}
	if s.literal != nil {
		s.find = newFinder(s.literal)
	}
	if g := args.Glob; g != "" {
		s.glob, err = compileGlob(g)
		if err != nil {
			return errorf(`invalid glob %q: %v; use a pattern such as "*.go", "src/*.ts" or "**/*_test.go"`, text.Truncate(g, 200), err)
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
	path    string
	scanned bool // searched as text
	matches []searchMatch
	// binary is set for a binary file that has a matching line: its lines
	// are not shown, but the hint names it.
	binary bool
	// skip says why the file, or its rest, was not searched (for the hint).
	skip string
	// timedOut is set when the search's deadline left the file unsearched,
	// or cut its search short.
	timedOut bool
}

// source is where a search reads its files: a [bufferfs.Scan] when the FS
// offers one (streaming reads of any size into reused buffers), else the
// FS's Read (a loaded buffer's text in the editor), which stops at
// bufferfs.MaxFileBytes.
type source struct {
	scan *bufferfs.Scan
	read func(ctx context.Context, path string, limit int64) (bufferfs.File, error)
}

// scanner is implemented by a [bufferfs.Disk].
type scanner interface {
	Scan(ctx context.Context) (*bufferfs.Scan, error)
}

// newSource picks the way to read fsys; done releases it.
func newSource(ctx context.Context, fsys bufferfs.FS) (src source, done func(), err error) {
	if sc, ok := fsys.(scanner); ok {
		scan, err := sc.Scan(ctx)
		if err != nil {
			return source{}, nil, err
		}
		return source{scan: scan}, scan.Close, nil
	}
	src.read = fsys.Read
	if u, ok := fsys.(bufferfs.UnhashedReader); ok {
		src.read = u.ReadUnhashed
	}
	return src, func() {}, nil
}

// searchBatch is the number of paths a worker takes at a time.
const searchBatch = 16

// Buffers of a search: each worker reads files through one, of
// readBufBytes; a line longer than that grows it, up to maxLineBytes.
const (
	readBufBytes = 256 << 10
	maxLineBytes = 4 << 20
)

// readBufs keeps a few read buffers of readBufBytes between searches
// (unlike a sync.Pool, a collection does not empty it).
var readBufs = make(chan *[]byte, 4)

func getBuf() *[]byte {
	select {
	case b := <-readBufs:
		return b
	default:
		b := make([]byte, readBufBytes)
		return &b
	}
}

// putBuf keeps b for the next search, unless a long line grew it.
func putBuf(b *[]byte) {
	if len(*b) != readBufBytes {
		return
	}
	select {
	case readBufs <- b:
	default:
	}
}

// searchPath searches the file p; buf is the worker's read buffer.
func (s *searcher) searchPath(ctx context.Context, src source, p string, buf *[]byte) fileFound {
	if src.scan == nil {
		f, err := src.read(ctx, p, bufferfs.MaxFileBytes)
		if err != nil {
			return fileFound{skip: skipReason(err)}
		}
		fs := fileScan{s: s, p: p, line: 1}
		fs.feed(f.Data, true)
		return fs.found
	}
	r, err := src.scan.Open(ctx, p)
	if err != nil {
		return fileFound{skip: skipReason(err)}
	}
	defer r.Close()
	return s.stream(ctx, r.Info().Path, r, buf)
}

// skipReason says why a file the walk listed could not be read, or is ""
// when the file is not one the search would visit: gone, replaced by a
// symlink or a special file, hard-linked, or one the FS keeps from file
// tools.
func skipReason(err error) string {
	switch {
	case errors.Is(err, bufferfs.ErrNotFound), errors.Is(err, bufferfs.ErrSymlink),
		errors.Is(err, bufferfs.ErrMultiLink), errors.Is(err, bufferfs.ErrNotRegular),
		errors.Is(err, bufferfs.ErrNotDir), errors.Is(err, bufferfs.ErrProtected),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return ""
	case errors.Is(err, bufferfs.ErrTooLarge):
		return fmt.Sprintf("over %d bytes, more than can be read here", bufferfs.MaxFileBytes)
	}
	return "unreadable: " + err.Error()
}

// stream searches the content of r, read into *buf a chunk of whole lines
// at a time, so a file of any size is searched in bounded memory. A line
// longer than the buffer is held whole (the buffer grows, up to
// maxLineBytes) only if it holds the literal every match contains; one
// without it cannot match and is read past in pieces.
func (s *searcher) stream(ctx context.Context, p string, r io.ReadSeeker, buf *[]byte) fileFound {
	fs := &fileScan{s: s, p: p, line: 1}
	ls := &lineStream{s: s, r: r, buf: buf, b: *buf, lineStart: -1, holdWhole: -1, keep: len(s.literal) - 1}
	for {
		if err := ls.fill(); err != nil {
			fs.found.skip = "unreadable: " + err.Error()
			return fs.found
		}
		if !fs.sniffed {
			fs.sniff(ls.b[:ls.filled])
		}
		if ctx.Err() != nil {
			return fs.found // the search's deadline or cancellation ends it
		}
		step := ls.scan
		if ls.skipping {
			step = ls.skip
		}
		if done := step(fs); done {
			return fs.found
		}
	}
}

// lineStream is the buffer of [searcher.stream]: b[:filled] holds the
// file from offset base on.
type lineStream struct {
	s      *searcher
	r      io.ReadSeeker
	buf    *[]byte // the caller's buffer, replaced when b grows
	b      []byte
	filled int
	eof    bool  // the last fill reached the end of the file
	base   int64 // file offset of b[0]
	// lineStart is the offset of the long line being read past, holdWhole
	// that of a long line to hold whole (-1: none); skipping: b holds the
	// end of that line, after lineStart.
	lineStart, holdWhole int64
	skipping             bool
	keep                 int // bytes kept between pieces when skipping
}

// fill reads until the buffer is full or the file ends.
func (ls *lineStream) fill() error {
	ls.eof = false
	for ls.filled < len(ls.b) {
		n, err := ls.r.Read(ls.b[ls.filled:])
		ls.filled += n
		if err == io.EOF {
			ls.eof = true
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// keepTail keeps only the last keep bytes, which a literal may straddle.
func (ls *lineStream) keepTail() {
	n := copy(ls.b, ls.b[ls.filled-ls.keep:ls.filled])
	ls.base += int64(ls.filled - n)
	ls.filled = n
}

// skip reads past a long line in pieces until it ends, or until it turns
// out to hold the literal: then it is read again, whole. It reports
// whether the file is done.
func (ls *lineStream) skip(fs *fileScan) bool {
	b := ls.b[:ls.filled]
	nl := bytes.IndexByte(b, '\n')
	end := ls.filled
	if nl >= 0 {
		end = nl
	}
	switch {
	case ls.s.find.index(b[:end]) >= 0:
		// The line may match after all: read it again, whole.
		if _, err := ls.r.Seek(ls.lineStart, io.SeekStart); err != nil {
			fs.found.skip = "unreadable: " + err.Error()
			return true
		}
		ls.base, ls.filled, ls.skipping, ls.holdWhole = ls.lineStart, 0, false, ls.lineStart
	case nl < 0 && ls.eof:
		return true // the last line, without the literal
	case nl < 0:
		ls.keepTail()
	default:
		// The long line ends here, without the literal.
		fs.line++
		ls.skipping = false
		ls.filled = copy(ls.b, ls.b[nl+1:ls.filled])
		ls.base += int64(nl + 1)
	}
	return false
}

// scan feeds the buffer's whole lines to the file's search and keeps the
// partial last line for the next fill. It reports whether the file is
// done.
func (ls *lineStream) scan(fs *fileScan) bool {
	end := ls.filled
	if !ls.eof {
		nl := bytes.LastIndexByte(ls.b[:ls.filled], '\n')
		if nl < 0 {
			return ls.longLine(fs)
		}
		end = nl + 1
	}
	if !fs.feed(ls.b[:end], ls.eof) || ls.eof {
		return true
	}
	ls.filled = copy(ls.b, ls.b[end:ls.filled])
	ls.base += int64(end)
	return false
}

// longLine handles one line that fills the buffer: read past it when it
// cannot hold the literal, else grow the buffer up to maxLineBytes.
func (ls *lineStream) longLine(fs *fileScan) bool {
	s := ls.s
	if s.literal != nil && ls.base != ls.holdWhole && s.find.index(ls.b[:ls.filled]) < 0 {
		ls.lineStart, ls.skipping = ls.base, true
		ls.keepTail()
		return false
	}
	if len(ls.b) >= maxLineBytes {
		fs.found.skip = fmt.Sprintf("line %d is longer than %d bytes; searched up to it", fs.line, maxLineBytes)
		return true
	}
	bigger := make([]byte, 2*len(ls.b))
	copy(bigger, ls.b[:ls.filled])
	ls.b = bigger
	*ls.buf = bigger
	return false
}

// fileScan is the state of searching one file fed in chunks of whole lines.
type fileScan struct {
	s       *searcher
	p       string
	line    int // number of the first line of the next chunk
	sniffed bool
	found   fileFound
}

// sniff tells a binary file from a text file by the first bytes of it:
// text has no NUL among the first binarySniff.
func (f *fileScan) sniff(start []byte) {
	f.sniffed = true
	f.found.scanned = bytes.IndexByte(start[:min(len(start), binarySniff)], 0) < 0
}

// feed searches chunk, the next lines of the file (the last one, when
// last, need not end in a newline). It reports whether the rest of the file
// is still worth reading.
func (f *fileScan) feed(chunk []byte, last bool) bool {
	s := f.s
	if !f.sniffed {
		f.sniff(chunk)
	}
	if !f.found.scanned {
		// A binary file: only whether some line matches matters.
		if len(s.lines(f.p, f.line, chunk, 1)) > 0 {
			f.found.binary = true
			return false
		}
	} else {
		room := s.limit - len(f.found.matches)
		f.found.matches = append(f.found.matches, s.lines(f.p, f.line, chunk, room)...)
		if len(f.found.matches) >= s.limit {
			return false
		}
	}
	if !last {
		f.line += bytes.Count(chunk, []byte{'\n'})
	}
	return true
}

// lines returns the matching lines of data, at most room of them; the first
// line of data is line number first.
func (s *searcher) lines(p string, first int, data []byte, room int) []searchMatch {
	if s.literal != nil {
		return s.scanLiteral(p, first, data, room)
	}
	return s.scanRegexp(p, first, data, room)
}

// scanLiteral finds candidate lines by a substring every match contains,
// then runs the regexp on those lines only.
func (s *searcher) scanLiteral(p string, line int, data []byte, room int) (out []searchMatch) {
	counted := 0
	pos := 0
	for pos < len(data) && len(out) < room {
		i := s.find.index(data[pos:])
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
func (s *searcher) scanRegexp(p string, line int, data []byte, room int) (out []searchMatch) {
	counted := 0
	pos := 0
	for pos < len(data) && len(out) < room {
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

// run walks dir (or reads it, when it names a file) and collects matches.
// Files are read and searched by a few workers, since reading is mostly
// waiting on the kernel, but matches are committed in walk order, so the
// result is the same as a sequential search's. The deadline bounds the walk
// itself too, so a tree of empty directories cannot outlast it.
func (s *searcher) run(ctx context.Context, fsys bufferfs.FS, deadline time.Time) error {
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	src, done, err := newSource(ctx, fsys)
	if err != nil {
		return err
	}
	defer done()
	sr := &searchRun{s: s, ctx: ctx, wctx: wctx, deadline: deadline, src: src,
		jobs: make(chan searchJob, 8), found: make(chan []fileFound, 8), enough: make(chan struct{})}
	var workers sync.WaitGroup
	for range max(2, runtime.GOMAXPROCS(0)) {
		workers.Go(sr.work)
	}
	committed := make(chan struct{})
	go func() {
		defer close(committed)
		sr.commitInOrder()
	}()
	walkErr := sr.walk(fsys)
	close(sr.jobs)
	workers.Wait()
	close(sr.found)
	<-committed
	return sr.finish(fsys, walkErr)
}

// searchJob is a batch of paths for a worker: paths go to the workers in
// batches, which keeps the hand-offs between goroutines few next to the
// files. idx is the walk's index of the first.
type searchJob struct {
	idx   int
	paths []string
}

// searchRun is one [searcher.run]: the walk hands batches of paths to the
// workers, whose results are committed in walk order until the match
// limit is reached.
type searchRun struct {
	s        *searcher
	ctx      context.Context // the caller's: its end is an error
	wctx     context.Context // with the search's deadline: its end is a time-out
	deadline time.Time
	src      source
	jobs     chan searchJob
	found    chan []fileFound
	enough   chan struct{} // closed once the match limit is reached
	n        int           // paths sent so far
	batch    []string
}

// work searches the files of each job it receives.
func (sr *searchRun) work() {
	buf := getBuf()
	defer putBuf(buf)
	for j := range sr.jobs {
		rs := make([]fileFound, len(j.paths))
		for i, p := range j.paths {
			if sr.wctx.Err() == nil {
				rs[i] = sr.s.searchPath(sr.wctx, sr.src, p, buf)
			}
			// The deadline cut this file's search short, or it came
			// before it started.
			rs[i].timedOut = sr.wctx.Err() != nil && sr.ctx.Err() == nil
			rs[i].idx, rs[i].path = j.idx+i, p
		}
		sr.found <- rs
	}
}

// commitInOrder commits the workers' results in walk order, and closes
// enough once the matches reach the limit (the rest is drained unread).
func (sr *searchRun) commitInOrder() {
	pending := map[int]fileFound{}
	next, full := 0, false
	for rs := range sr.found {
		for _, r := range rs {
			pending[r.idx] = r
		}
		for r, ok := pending[next]; ok; r, ok = pending[next] {
			delete(pending, next)
			next++
			if full {
				continue
			}
			sr.s.commit(r)
			if len(sr.s.matches) >= sr.s.limit {
				full = true
				close(sr.enough)
			}
		}
	}
}

// send hands the current batch to the workers; fs.SkipAll ends the walk
// once enough matched or the deadline passed.
func (sr *searchRun) send() error {
	if len(sr.batch) == 0 {
		return nil
	}
	select {
	case sr.jobs <- searchJob{sr.n, sr.batch}:
		sr.n += len(sr.batch)
		sr.batch = make([]string, 0, searchBatch)
		return nil
	case <-sr.enough:
		return fs.SkipAll
	case <-sr.wctx.Done():
		if sr.ctx.Err() != nil {
			return sr.ctx.Err()
		}
		sr.s.timedOut = true
		return fs.SkipAll
	}
}

// visit is the walk's function: a path the glob keeps joins the batch.
func (sr *searchRun) visit(p string) error {
	if err := sr.ctx.Err(); err != nil {
		return err
	}
	if sr.wctx.Err() != nil || !time.Now().Before(sr.deadline) {
		sr.s.timedOut = true
		return fs.SkipAll
	}
	if sr.s.glob != nil && !sr.s.globMatch(p) {
		return nil
	}
	sr.batch = append(sr.batch, p)
	if len(sr.batch) < searchBatch {
		return nil
	}
	return sr.send()
}

// walk walks the search's folder, through the disk's scan when there is
// one, and sends the last batch.
func (sr *searchRun) walk(fsys bufferfs.FS) error {
	var err error
	if sr.src.scan != nil {
		err = sr.src.scan.Walk(sr.wctx, sr.s.dir, sr.visit)
	} else {
		err = fsys.Walk(sr.wctx, sr.s.dir, func(p string, _ bufferfs.Info) error { return sr.visit(p) })
	}
	if err == nil {
		err = sr.send()
	}
	return err
}

// finish turns the walk's end into the search's: a time-out is a result,
// not an error; a path that names a file is searched alone.
func (sr *searchRun) finish(fsys bufferfs.FS, walkErr error) error {
	ctx, wctx, s := sr.ctx, sr.wctx, sr.s
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
	if !errors.Is(walkErr, bufferfs.ErrNotDir) {
		return walkErr
	}
	if err := s.single(wctx, fsys, sr.src, walkErr); err != nil {
		return err
	}
	if wctx.Err() != nil && ctx.Err() == nil && len(s.matches) < s.limit {
		s.timedOut = true
	}
	return ctx.Err()
}

// single searches s.dir as a file, after walking it as a directory failed
// with walkErr.
func (s *searcher) single(ctx context.Context, fsys bufferfs.FS, src source, walkErr error) error {
	var r fileFound
	if src.scan != nil {
		f, err := src.scan.Open(ctx, s.dir)
		if err != nil {
			return walkErr
		}
		defer f.Close()
		buf := getBuf()
		defer putBuf(buf)
		r = s.stream(ctx, f.Info().Path, f, buf)
		r.path = f.Info().Path
	} else {
		f, err := fsys.Read(ctx, s.dir, bufferfs.MaxFileBytes)
		if err != nil {
			if errors.Is(err, bufferfs.ErrTooLarge) {
				return err
			}
			return walkErr
		}
		fs := fileScan{s: s, p: f.Path, line: 1}
		fs.feed(f.Data, true)
		r = fs.found
		r.path = f.Path
	}
	s.commit(r)
	return nil
}

// commit adds what searching one file found to the result, in walk order.
func (s *searcher) commit(r fileFound) {
	if r.scanned {
		s.scanned++
	}
	if r.timedOut {
		s.timedOut = true
	}
	room := s.limit - len(s.matches)
	s.matches = append(s.matches, r.matches[:min(room, len(r.matches))]...)
	if r.binary {
		s.binary = append(s.binary, r.path)
	}
	if r.skip != "" {
		s.skipped = append(s.skipped, r.path+" ("+r.skip+")")
	}
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

// lineEnd returns the offset of the newline ending the line holding at, or
// len(data).
func lineEnd(data []byte, at int) int {
	if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
		return at + i
	}
	return len(data)
}

// match describes a matching line, cut to maxMatchChars characters.
func match(p string, line int, b []byte) searchMatch {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if len(b) > maxMatchChars {
		b = b[:len(text.Truncate(string(b), maxMatchChars))]
	}
	return searchMatch{Path: p, Line: line, Text: validText(b)}
}

// result builds the bounded tool result.
func (s *searcher) result(timeout time.Duration) Result {
	body := searchBody{Status: report.StatusOK, Matches: s.matches, FilesScanned: s.scanned}
	notes := s.notes()
	switch {
	case len(body.Matches) > maxSearchMatches:
		body.Matches = body.Matches[:maxSearchMatches]
		body.Truncated = true
		body.Hint = fmt.Sprintf("stopped at %d matches; narrow the pattern, path or glob to see the rest", maxSearchMatches)
	case s.timedOut:
		body.Truncated = true
		body.Hint = fmt.Sprintf("stopped after %s before every file was searched; narrow path or glob", timeout)
	case notes != "":
		body.Truncated = true
		if len(body.Matches) == 0 {
			body.Hint = "no matching lines shown; " + notes
		} else {
			body.Hint = notes
		}
		notes = ""
	case len(body.Matches) == 0 && s.scanned == 0:
		body.Hint = "no text files were searched; check path and glob with file_list"
	case len(body.Matches) == 0:
		body.Hint = "no matches; the pattern is an RE2 regular expression (set literal to true for exact text)"
	}
	if notes != "" {
		body.Hint += "; " + notes
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

// maxNamed bounds the files named by each note of the hint.
const maxNamed = 5

// notes describes the files the result leaves out although they may
// match: binary files with a matching line, and files not (fully) searched.
// It is "" when there are none.
func (s *searcher) notes() string {
	var parts []string
	if len(s.binary) > 0 {
		parts = append(parts, "binary files with a matching line (lines not shown): "+nameSome(s.binary))
	}
	if len(s.skipped) > 0 {
		parts = append(parts, "not fully searched: "+nameSome(s.skipped))
	}
	return strings.Join(parts, "; ")
}

// nameSome lists the first maxNamed items and counts the rest.
func nameSome(items []string) string {
	if len(items) <= maxNamed {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:maxNamed], ", "), len(items)-maxNamed)
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
