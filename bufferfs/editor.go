package bufferfs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// EditorBridge calls one tool of the editor's tool module (doc/design.md §11.3).
// Call returns the tool's result object, whose "status" says whether the
// editor did it; a Go error means the bridge itself failed (timeout,
// transport, wrong workspace) and the editor must be treated as gone.
// Implementations bound every call by the editor timeout.
type EditorBridge interface {
	Call(ctx context.Context, tool string, args map[string]any) (map[string]any, error)
}

// Editor is the buffer-aware [FS] of doc/design.md §11: reads see a loaded buffer's
// text, unsaved edits included; writes go through the editor, which writes
// the file atomically, refuses to overwrite a buffer with unsaved changes
// and refreshes every loaded buffer for the path.
//
// Every path first passes the [Disk]'s confinement (root freshness,
// [ValidPath], no symlink, no hard link, protected files, trust), so the
// editor only ever sees paths flow itself accepts. What reaches the editor:
//
//   - Read: file_read {path}.
//   - Write: missing parent directories are created by the Disk, then
//     file_write {path, content, expected_sha256}; expected_sha256 is the
//     hash of what flow last read or wrote through this Editor, so a file
//     changed meanwhile is a conflict ([ErrConflict]), and a buffer with
//     unsaved changes a refusal ([ErrDirtyBuffer]).
//   - Remove: the Disk removes the file, but only when the editor has no
//     loaded buffer for it.
//
// Stat, List, Walk and CheckRoot are the Disk's: they describe what is on
// disk, which is what fingerprints and listings need (unsaved buffers are
// the freshness snapshot's concern, doc/design.md §11.7).
//
// The first bridge failure marks the Editor unavailable: every later
// operation that needs the editor fails with [ErrEditorUnavailable]. There
// is never a silent fallback to writing the disk directly.
type Editor struct {
	disk   *Disk
	bridge EditorBridge

	mu     sync.Mutex
	seen   map[string]string // cleaned path → SHA-256 last read or written
	failed error             // first bridge failure
}

var _ FS = (*Editor)(nil)

// NewEditor returns an Editor for the workspace of disk, talking to the
// editor through bridge. The Editor does not own disk: the caller closes
// it.
func NewEditor(disk *Disk, bridge EditorBridge) *Editor {
	return &Editor{disk: disk, bridge: bridge, seen: make(map[string]string)}
}

// Root returns the workspace root.
func (e *Editor) Root() string { return e.disk.Root() }

// CheckRoot reports a replaced root (see [Disk.CheckRoot]).
func (e *Editor) CheckRoot(ctx context.Context) error { return e.disk.CheckRoot(ctx) }

// Err returns the bridge failure that made the Editor unavailable, or nil.
func (e *Editor) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.failed
}

// call runs one editor tool for operation o. A bridge error marks the
// Editor unavailable; a result whose status is not "ok" is a refusal.
func (e *Editor) call(ctx context.Context, o *op, tool string, args map[string]any) (map[string]any, error) {
	if err := e.Err(); err != nil {
		return nil, o.fail(err)
	}
	res, err := e.bridge.Call(ctx, tool, args)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, o.fail(ctxErr)
		}
		e.mu.Lock()
		if e.failed == nil {
			e.failed = unavailable(err)
		}
		err = e.failed
		e.mu.Unlock()
		return nil, o.fail(err)
	}
	if res == nil {
		return nil, o.fail(rule(ErrEditorUnavailable, "the editor returned no result", ""))
	}
	if fieldString(res, "status") != "ok" {
		return nil, o.fail(editorRefusal(res))
	}
	return res, nil
}

// unavailable wraps a bridge failure in ErrEditorUnavailable.
func unavailable(err error) error {
	if errors.Is(err, ErrEditorUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrEditorUnavailable, err)
}

// content returns the string or byte-string field key of res.
func content(res map[string]any, key string) ([]byte, bool) {
	switch v := res[key].(type) {
	case string:
		return []byte(v), true
	case []byte:
		return v, true
	}
	return nil, false
}

// Read returns the file's text as the editor has it: a loaded buffer's
// text (unsaved edits included), else the file on disk. A file larger than
// limit (<= 0 or above MaxFileBytes means MaxFileBytes) is an [ErrTooLarge]
// error.
func (e *Editor) Read(ctx context.Context, path string, limit int64) (File, error) {
	o, st, err := e.disk.inspect(ctx, "read", path)
	if err != nil {
		return File{}, err
	}
	defer o.release()
	if limit <= 0 || limit > MaxFileBytes {
		limit = MaxFileBytes
	}
	res, err := e.call(ctx, o, "file_read", map[string]any{"path": o.clean})
	if err != nil {
		return File{}, err
	}
	data, ok := content(res, "content")
	if !ok {
		return File{}, o.fail(rule(ErrEditorUnavailable, "the editor's file_read result has no content", ""))
	}
	if int64(len(data)) > limit {
		return File{}, o.fail(tooLarge("file", limit))
	}
	sum := hashHex(data)
	if want := fieldString(res, "sha256"); want != "" && want != sum {
		return File{}, o.fail(rule(ErrEditorUnavailable, "the editor's file_read hash does not match its content", ""))
	}
	// Text of a modified buffer says nothing about the disk: remember only
	// what matches the file (or an unmodified buffer of it).
	if modified, _ := res["modified"].(bool); !modified {
		e.remember(o.clean, sum)
	} else {
		e.forget(o.clean)
	}
	info := Info{Path: o.clean, Exists: true, Size: int64(len(data)), SHA256: sum}
	if st != nil {
		disk := makeInfo(o.clean, st)
		info.Mode, info.ModTime = disk.Mode, disk.ModTime
	} else {
		info.Mode, info.ModTime = 0o644, time.Now()
	}
	return File{Info: info, Data: data}, nil
}

func (e *Editor) remember(clean, sum string) {
	e.mu.Lock()
	e.seen[clean] = sum
	e.mu.Unlock()
}

func (e *Editor) forget(clean string) {
	e.mu.Lock()
	delete(e.seen, clean)
	e.mu.Unlock()
}

func (e *Editor) lastSeen(clean string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seen[clean]
}

// Write replaces (or creates) the file through the editor. The Disk's write
// rules apply first and it creates missing parent directories; then the
// editor writes the file atomically and refreshes its loaded buffers. A
// buffer with unsaved changes is an [ErrDirtyBuffer] refusal, a file or
// buffer changed since flow read it an [ErrConflict]; the file is then
// unchanged. opts.Mode, when set, is applied after the editor's write.
func (e *Editor) Write(ctx context.Context, path string, data []byte, opts WriteOptions) (Info, error) {
	o, st, err := e.disk.prepareWrite(ctx, path, len(data))
	if err != nil {
		return Info{}, err
	}
	defer o.release()
	args := map[string]any{"path": o.clean, "content": string(data)}
	if st != nil {
		if sum := e.lastSeen(o.clean); sum != "" {
			args["expected_sha256"] = sum
		}
	}
	res, err := e.call(ctx, o, "file_write", args)
	if err != nil {
		return Info{}, err
	}
	sum := hashHex(data)
	if got := fieldString(res, "sha256"); got != "" && got != sum {
		return Info{}, o.fail(rule(ErrEditorUnavailable, "the editor's file_write hash does not match the content", ""))
	}
	e.remember(o.clean, sum)
	info, err := e.disk.statAfterWrite(o, opts.Mode)
	if err != nil {
		return Info{}, o.fail(err)
	}
	info.SHA256 = sum
	info.Diagnostics = editDiagnostics(res)
	return info, nil
}

// Remove deletes the file from disk, but only when the editor has no loaded
// buffer for it (the buffer would keep the old text); it then refuses with
// [ErrConflict].
func (e *Editor) Remove(ctx context.Context, path string) error {
	o, err := e.disk.begin(ctx, "remove", path)
	if err != nil {
		return err
	}
	if err := e.disk.checkWritable(o.clean); err != nil {
		o.release()
		return o.fail(err)
	}
	res, err := e.call(ctx, o, "editor_context", map[string]any{"path": o.clean})
	o.release()
	if err != nil {
		return err
	}
	if loaded, _ := res["loaded"].(bool); loaded {
		msg := "file is open in Neovim"
		if n, ok := fieldInt(res, "bufnr"); ok {
			msg += fmt.Sprintf(" (buffer %d)", n)
		}
		return o.fail(rule(ErrConflict, msg, "close the buffer first; the file was not removed"))
	}
	return e.disk.Remove(ctx, path)
}

// Stat describes the file on disk (see [Disk.Stat]).
func (e *Editor) Stat(ctx context.Context, path string) (Info, error) {
	return e.disk.Stat(ctx, path)
}

// List lists the files on disk (see [Disk.List]).
func (e *Editor) List(ctx context.Context, dir string) (Listing, error) {
	return e.disk.List(ctx, dir)
}

// Walk walks the files on disk (see [Disk.Walk]).
func (e *Editor) Walk(ctx context.Context, dir string, fn WalkFunc) error {
	return e.disk.Walk(ctx, dir, fn)
}
