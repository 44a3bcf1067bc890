package bufferfs

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Sentinel errors. Every refusal of [Disk] is a [*PathError] whose Err
// wraps one of these, so callers can test the kind with errors.Is and show
// Error() to a model, which says what was wrong and what to do.
var (
	// ErrInvalidPath: the path breaks a lexical rule of doc/design.md §4 (empty,
	// absolute, "..", ".git", too long, too deep) or names the root where a
	// file is required.
	ErrInvalidPath = errors.New("invalid path")
	// ErrOutside: resolving the path would leave the workspace.
	ErrOutside = errors.New("path is outside workspace")
	// ErrSymlink: a component of the path is a symbolic link.
	ErrSymlink = errors.New("symlinks are not allowed in file paths")
	// ErrMultiLink: the file has more than one hard link.
	ErrMultiLink = errors.New("multiply linked files are not allowed in file paths")
	// ErrReadOnly: a write or remove on an untrusted workspace.
	ErrReadOnly = errors.New("workspace is read-only; pass --trusted to allow edits")
	// ErrProtected: a write or remove of the operator configuration, or
	// any operation on flow's private state (DiskOptions.Private).
	ErrProtected = errors.New("operator configuration cannot be modified by file tools")
	// ErrStaleRoot: the workspace root was replaced or removed since the
	// Disk was created.
	ErrStaleRoot = errors.New("stale workspace")
	// ErrTooLarge: a file or content exceeds the byte limit.
	ErrTooLarge = errors.New("file too large")
	// ErrNotRegular: the path names a directory, FIFO, device or socket
	// where a regular file is required.
	ErrNotRegular = errors.New("not a regular file")
	// ErrNotDir: a directory operation named something that is not a
	// directory, or a parent component of a path is not a directory.
	ErrNotDir = errors.New("not a directory")
	// ErrNotFound: nothing exists at the path. It wraps [fs.ErrNotExist].
	ErrNotFound = fmt.Errorf("file not found: %w", fs.ErrNotExist)
	// ErrClosed: the Disk was closed.
	ErrClosed = errors.New("workspace closed")
	// ErrBusy: the kernel kept reporting a concurrent rename while resolving
	// the path; retrying later usually works.
	ErrBusy = errors.New("path resolution raced with a rename")
)

// Messages of the stale-root check (doc/design.md §4), also returned by CheckRoot.
const (
	msgRootReplaced    = "stale workspace: root was replaced; restart flow"
	msgRootUnavailable = "stale workspace: root is unavailable; restart flow"
)

// PathError records a refused or failed file operation on one path.
type PathError struct {
	// Op is the operation: read, write, remove, stat, list or walk.
	Op string
	// Path is the path as the caller gave it.
	Path string
	// Err is the cause; it wraps one of the package's sentinel errors or a
	// system error.
	Err error
}

// Error returns "op path: cause".
func (e *PathError) Error() string {
	return e.Op + " " + displayPath(e.Path) + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *PathError) Unwrap() error { return e.Err }

// ruleError is a cause with a message meant for a model and a sentinel kind
// for errors.Is.
type ruleError struct {
	kind error
	msg  string
}

func (e *ruleError) Error() string { return e.msg }
func (e *ruleError) Unwrap() error { return e.kind }

// rule returns a cause of the given kind. The message starts with the
// reference program's wording; hint, when set, tells the reader what to do.
func rule(kind error, msg, hint string) error {
	if hint != "" {
		msg += "; " + hint
	}
	return &ruleError{kind: kind, msg: msg}
}

// Causes shared by several operations.
var (
	errRootPath = rule(ErrInvalidPath, "expected a file path, not workspace root",
		`name a file inside the workspace, such as "src/main.go"`)
	errSymlinkPath = rule(ErrSymlink, "symlinks are not allowed in file paths",
		"use the real location of the file inside the workspace")
	errMultiLink = rule(ErrMultiLink, "multiply linked files are not allowed in file paths",
		"this file has several hard links and cannot be used by file tools")
	errReadOnly  = rule(ErrReadOnly, "workspace is read-only; pass --trusted to allow edits", "")
	errProtected = rule(ErrProtected, "operator configuration cannot be modified by file tools",
		"leave this file alone and edit project files instead")
	errPrivate = rule(ErrProtected, "flow's own state, log and configuration are off limits to file tools",
		"leave them alone and work on project files instead")
	errNoFile = rule(ErrNotFound, "no such file",
		"check the path with file_list; paths are relative to the workspace root")
	errNoDir = rule(ErrNotFound, "directory not found",
		`check the path with file_list; use "." for the workspace root`)
	errFileNotDir = rule(ErrNotDir, "directory not found",
		"the path does not name a directory; check it with file_list, or read a file with file_read")
	errParentNotDir = rule(ErrNotDir, "a parent of the path is not a directory",
		"a file is used as a directory in the path; check it with file_list")
	errOutside = rule(ErrOutside, "path is outside workspace",
		"use a path relative to the workspace root")
	errNameTooLong = rule(ErrInvalidPath, "a path component is longer than the file system allows",
		"use shorter file and directory names")
	errBusy  = rule(ErrBusy, "the path changed while it was being opened", "try again")
	errStale = rule(ErrStaleRoot, msgRootReplaced, "")
	errGone  = rule(ErrStaleRoot, msgRootUnavailable, "")
)

// tooLarge is the cause for a file or content over limit bytes.
func tooLarge(what string, limit int64) error {
	hint := "the file is too large for file tools"
	if what == "content" {
		hint = "write smaller files"
	}
	return rule(ErrTooLarge, what+" exceeds "+strconv.FormatInt(limit, 10)+" byte limit", hint)
}

// notRegular is the cause for a non-regular file; verb is "read",
// "overwritten" or "removed".
func notRegular(verb string, mode uint32) error {
	kind := fileKind(mode)
	hint := "only regular files can be " + verb + "; this is " + kind
	if kind == "a directory" {
		hint += "; use file_list to see its files"
	}
	return rule(ErrNotRegular, "only singly-linked regular files can be "+verb, hint)
}

// displayPath returns p in a form safe to show: quoted when it holds
// unprintable characters or spaces, shortened when very long.
func displayPath(p string) string {
	const max = 120
	if utf8.RuneCountInString(p) > max {
		r := []rune(p)
		p = string(r[:max]) + "..."
	}
	for _, c := range p {
		if !unicode.IsPrint(c) || c == ' ' || c == '"' {
			return strconv.Quote(p)
		}
	}
	if p == "" {
		return `""`
	}
	return p
}
