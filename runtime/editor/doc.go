// Package editor is flow's one seam to the attached editor (doc/design.md
// §11.4): the [Session] interface an editor attachment implements, and the
// freshness protocol v1 (§11.7) that decides whether what flow verified is
// still what the editor shows.
//
// # One seam
//
// The adapter (plugin.Bridge over a Neovim connection) implements one
// [Session], the service takes it in one option field, and derives from
// it everything the runtime needs: the editor tools of a run's toolbox,
// coverage evidence (editor_lint, editor_diagnostics), the check refusal
// over unsaved buffers and the stale marks of verification, and the editor
// part of status reports. The freshness protocol lives here, beside the
// session it is spoken over, not in the file system that never uses it.
//
// bufferfs stays a leaf: its buffer-aware file system needs only a Call,
// which it declares itself (bufferfs.EditorBridge) and a Session satisfies.
// Failures still wrap bufferfs.ErrEditorUnavailable, the one sentinel for
// "the editor is gone".
package editor
