// Package bufferfs is the only way flow's file tools touch workspace files.
//
// [FS] is the interface every tool uses. [Disk] implements it with
// descriptor-relative, symlink-refusing, atomic disk I/O confined to one root
// directory (doc/design.md §4). A buffer-aware implementation for Neovim (doc/design.md §11)
// implements the same interface, so callers never know which one they hold.
package bufferfs

import (
	"context"
	"io/fs"
	"time"
)

// Limits of doc/design.md §15 that belong to file I/O.
const (
	MaxFileBytes      = 262144 // largest file read or written
	MaxPathChars      = 1024   // longest tool path, in characters
	MaxPathComponents = 32     // deepest tool path
	MaxListFiles      = 500    // files returned by one listing
	MaxListVisited    = 5000   // names visited by one listing
)

// Info describes one workspace file.
type Info struct {
	// Path is the cleaned, slash-separated path relative to the root.
	Path string `json:"path"`
	// Exists is false when nothing is at Path (Stat of a missing file).
	Exists bool `json:"exists"`
	// Size is the file size in bytes.
	Size int64 `json:"size"`
	// Mode holds the permission bits.
	Mode fs.FileMode `json:"mode"`
	// ModTime is the last modification time.
	ModTime time.Time `json:"mtime"`
	// SHA256 is the lower-case hex SHA-256 of the raw bytes. It is empty when
	// the file does not exist or the operation does not hash (Walk).
	SHA256 string `json:"sha256,omitempty"`
	// Diagnostics are the editor's new error diagnostics for the file after
	// a write through [Editor]; nil elsewhere.
	Diagnostics *EditDiagnostics `json:"diagnostics,omitempty"`
}

// File is the content of a file together with its Info.
type File struct {
	Info
	Data []byte
}

// WriteOptions refine a write.
type WriteOptions struct {
	// Mode, when non-zero, sets the permission bits of the written file
	// (undo restores a file's old mode this way). When zero, an existing
	// file keeps its bits and a new file gets 0644.
	Mode fs.FileMode
}

// Listing is the result of [FS.List].
type Listing struct {
	Files []string `json:"files"`
	// Truncated is true only when some file was actually left out.
	Truncated bool `json:"truncated"`
}

// WalkFunc is called by [FS.Walk] for every visible regular file, in sorted
// order. Returning [fs.SkipAll] stops the walk without error; any other
// error stops it and is returned by Walk.
type WalkFunc func(path string, info Info) error

// FS is a workspace file system. Every path is relative to the root, uses
// '/' as separator and must pass the path rules of doc/design.md §4; "." names the
// root and is accepted only for directory operations.
type FS interface {
	// Root returns the absolute path of the workspace root.
	Root() string
	// CheckRoot reports ErrStaleRoot when the root directory was replaced
	// since the FS was created.
	CheckRoot(ctx context.Context) error
	// Read returns at most limit bytes of a regular, singly-linked file;
	// a file larger than limit is an ErrTooLarge error. limit <= 0 or above
	// MaxFileBytes means MaxFileBytes.
	Read(ctx context.Context, path string, limit int64) (File, error)
	// Write atomically replaces (or creates) a file with data, creating
	// missing parent directories. It requires a trusted FS and refuses
	// protected files.
	Write(ctx context.Context, path string, data []byte, opts WriteOptions) (Info, error)
	// Remove deletes a regular file. It requires a trusted FS and refuses
	// protected files.
	Remove(ctx context.Context, path string) error
	// Stat describes a file and hashes its content. A missing file is not an
	// error: it returns Info{Path: path, Exists: false}.
	Stat(ctx context.Context, path string) (Info, error)
	// List returns the visible files under dir, bounded by MaxListFiles and
	// MaxListVisited.
	List(ctx context.Context, dir string) (Listing, error)
	// Walk calls fn for every visible file under dir (the skip list, the
	// workspace's .gitignore files, no symlinks, no multiply-linked files),
	// without caps. It is the walker searches are built on.
	Walk(ctx context.Context, dir string, fn WalkFunc) error
}

// UnhashedReader is implemented by file systems that can read a file
// without hashing it. Searches, which read many files and never need their
// hashes, use it when the FS has it.
type UnhashedReader interface {
	ReadUnhashed(ctx context.Context, path string, limit int64) (File, error)
}

var _ UnhashedReader = (*Disk)(nil)
