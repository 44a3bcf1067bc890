// Package editor is flow's one seam to the attached editor (SPEC §12): the
// [Session] interface an editor attachment implements, and the freshness
// protocol v1 (SPEC §12.4) that decides whether what flow verified is still
// what the editor shows.
//
// # Why one package
//
// "The attached editor" used to be five interfaces in four packages (the
// buffer-aware file system's bridge, the tools' editor, verification's
// editor state and editor evidence, and a status function), wired field by
// field into the service, with a throw-away tool registry built only to
// satisfy one of them; and the freshness protocol lived in bufferfs,
// which never used it. Now the adapter (plugin.Bridge over a Neovim
// connection) implements one [Session], the service takes it in one option
// field, and derives from it everything the runtime needs: the editor tools
// of a run's toolbox, coverage evidence (editor_lint, editor_diagnostics),
// the check refusal over unsaved buffers and the stale marks of
// verification, and the editor part of status reports.
//
// bufferfs stays a leaf: its buffer-aware file system needs only a Call,
// which it declares itself (bufferfs.EditorBridge) and a Session satisfies.
// Failures still wrap bufferfs.ErrEditorUnavailable, the one sentinel for
// "the editor is gone".
package editor
