package verify

import (
	"context"
	"slices"
	"sync"

	"flow/bufferfs"
)

// WriteHook has the shape of tools.WriteHook: it is called before every
// write a file tool applies, with the file's current state.
type WriteHook = func(ctx context.Context, path string, old bufferfs.File, data []byte) error

// Originals remembers what each file a run wrote held before the run's
// first write to it: the "before" side of weakening detection and of the
// fail-then-pass evidence. It learns it from the write hook, so it costs
// nothing for files the run never touches. Its methods are safe for
// concurrent use.
type Originals struct {
	mu    sync.Mutex
	files map[string]bufferfs.File
}

// NewOriginals returns an empty recorder.
func NewOriginals() *Originals { return &Originals{files: map[string]bufferfs.File{}} }

// Hook returns a write hook that records the file's state on its first
// write, then calls next (nil: nothing else). Recording first is right even
// when next refuses the write: the file then still holds that content.
func (o *Originals) Hook(next WriteHook) WriteHook {
	return func(ctx context.Context, path string, old bufferfs.File, data []byte) error {
		o.record(path, old)
		if next == nil {
			return nil
		}
		return next(ctx, path, old, data)
	}
}

func (o *Originals) record(path string, old bufferfs.File) {
	clean, err := bufferfs.ValidPath(path)
	if err != nil {
		return // the write will be refused for the same reason
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, seen := o.files[clean]; seen {
		return
	}
	old.Data = slices.Clone(old.Data)
	if old.Data == nil {
		old.Data = []byte{}
	}
	o.files[clean] = old
}

// Original returns what path held before the run's first write to it (Exists
// false when the run created it), and whether the run wrote it at all.
func (o *Originals) Original(path string) (bufferfs.File, bool) {
	if o == nil {
		return bufferfs.File{}, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	f, ok := o.files[path]
	return f, ok
}
