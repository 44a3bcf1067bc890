package bufferfs

import (
	"context"
	"io"
	"sync"

	"golang.org/x/sys/unix"
)

// Scan is one read-only pass over many files of a Disk, as a search makes:
// the root descriptor is pinned and its freshness checked once, when the
// scan starts, rather than once per file, the walk does not stat every
// file, and files are opened for streaming reads with no size limit. Every
// path still passes the path rules and is opened without following any
// symlink, confined to the root. A Scan is safe for concurrent use; Close
// it when done.
type Scan struct {
	d  *Disk
	op *op

	mu     sync.RWMutex // held for reading while a file is opened
	closed bool
}

// Scan starts a scan of d.
func (d *Disk) Scan(ctx context.Context) (*Scan, error) {
	o, err := d.begin(ctx, "scan", ".")
	if err != nil {
		return nil, err
	}
	return &Scan{d: d, op: o}, nil
}

// Close ends the scan; Open fails with [ErrClosed] afterwards. Readers
// opened by the scan stay usable until closed.
func (s *Scan) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.op.release()
	}
}

// Walk calls fn for every file under dir that [Disk.Walk] would visit,
// in the same order, without stat'ing it: a file that turns out not to be
// a singly-linked regular file is refused by [Scan.Open]. fn returning
// fs.SkipAll stops the walk without error.
func (s *Scan) Walk(ctx context.Context, dir string, fn func(path string) error) error {
	return s.d.walk(ctx, dir, true, func(rel string, _ *unix.Stat_t) error {
		return fn(rel)
	})
}

// Open opens the regular, singly-linked file path for reading, whatever
// its size.
func (s *Scan) Open(ctx context.Context, path string) (*Reader, error) {
	o := &op{name: "read", path: path}
	if err := ctx.Err(); err != nil {
		return nil, o.fail(err)
	}
	clean, err := ValidPath(path)
	if err != nil {
		return nil, o.fail(err)
	}
	if clean == "." {
		return nil, o.fail(errRootPath)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, o.fail(ErrClosed)
	}
	if err := s.d.checkPrivate(s.op.rootfd, clean); err != nil {
		return nil, o.fail(err)
	}
	fd, st, err := s.d.openRead(s.op.rootfd, clean)
	if err != nil {
		return nil, o.fail(err)
	}
	return &Reader{fd: fd, info: makeInfo(clean, &st), left: st.Size}, nil
}

// Reader reads one file opened by [Scan.Open]: the bytes it held when it
// was opened, up to the size it had then (what a writer appends afterwards
// is not read, which spares a read call per file to find the end).
type Reader struct {
	fd   int
	info Info
	left int64 // bytes still expected
}

// Info describes the file as it was when opened (SHA256 is empty).
func (r *Reader) Info() Info { return r.info }

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p = p[:min(int64(len(p)), r.left)]
	for {
		n, err := unix.Read(r.fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			r.left = 0 // it shrank
			return 0, io.EOF
		}
		r.left -= int64(n)
		return n, nil
	}
}

// Seek implements io.Seeker; reads still end at the size the file had
// when it was opened.
func (r *Reader) Seek(offset int64, whence int) (int64, error) {
	off, err := unix.Seek(r.fd, offset, whence)
	if err != nil {
		return 0, err
	}
	r.left = r.info.Size - off
	return off, nil
}

// Close releases the file.
func (r *Reader) Close() error {
	if r.fd < 0 {
		return nil
	}
	err := unix.Close(r.fd)
	r.fd = -1
	return err
}
