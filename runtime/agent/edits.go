package agent

import (
	"context"
	"sync"

	"flow/bufferfs"
	"flow/runtime/diff"
	"flow/runtime/report"
	"flow/runtime/tools"
)

// maxEditDiff bounds the diff an edit's tool_end event carries.
const maxEditDiff = diff.DefaultLimit

// editCapture remembers the last write a tool call made, so that the call's
// tool_end event can carry that edit's diff.
type editCapture struct {
	mu   sync.Mutex
	path string
	old  bufferfs.File
	data []byte
	set  bool
}

// hook returns a write hook that calls next and, when next lets the write
// go ahead, records the write.
func (c *editCapture) hook(next tools.WriteHook) tools.WriteHook {
	return func(ctx context.Context, path string, old bufferfs.File, data []byte) error {
		if next != nil {
			if err := next(ctx, path, old, data); err != nil {
				return err
			}
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		clean, err := bufferfs.ValidPath(path)
		if err != nil {
			clean = path
		}
		// old.Data belongs to the caller until the hook returns, and data is
		// the content about to be written: both are kept only until the
		// call's tool_end, and copied so the tool may reuse its buffers.
		c.path, c.old, c.data, c.set = clean, old, append([]byte(nil), data...), true
		c.old.Data = append([]byte(nil), old.Data...)
		return nil
	}
}

// reset forgets the recorded write (before each tool call).
func (c *editCapture) reset() {
	c.mu.Lock()
	c.set, c.old, c.data = false, bufferfs.File{}, nil
	c.mu.Unlock()
}

// diffOf returns the diff of the recorded write to path, or nil when the
// call wrote something else or nothing.
func (c *editCapture) diffOf(path string) *report.FileDiff {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.set {
		return nil
	}
	clean, err := bufferfs.ValidPath(path)
	if err != nil || clean != c.path {
		return nil
	}
	d := diff.File(c.path, c.old.Data, c.data, c.old.Exists, true, maxEditDiff)
	return &d
}
