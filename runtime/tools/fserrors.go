package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"flow/bufferfs"
	"flow/internal/text"
)

// fsError turns a failed file operation into a tool error. The errors of
// [bufferfs.Disk] already say what was wrong and what to do; this adds what
// only the tool knows (which tool to use instead) and phrases the common
// cases the same way for every FS implementation.
func fsError(tool, p string, err error) Result {
	shown := text.Truncate(p, 200)
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errorf("%s cancelled: %v", tool, err)
	case errors.Is(err, bufferfs.ErrTooLarge) && tool != FileWrite && tool != FileEdit:
		return errorf("file too large: %s is over %d bytes (256 KiB), the limit of flow's file tools; "+
			"it cannot be read, even in parts with start_line/end_line, and file_search skips it; "+
			"work from other files", shown, bufferfs.MaxFileBytes)
	case errors.Is(err, bufferfs.ErrTooLarge) && tool == FileEdit:
		return errorf("%s: %v; the file must stay at most %d bytes (256 KiB), so a file this large cannot be edited",
			tool, err, bufferfs.MaxFileBytes)
	case errors.Is(err, bufferfs.ErrTooLarge):
		return errorf("%s: %v; content is limited to %d bytes (256 KiB): split it into several smaller files",
			tool, err, bufferfs.MaxFileBytes)
	case errors.Is(err, bufferfs.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return notFound(tool, shown)
	}
	return errorResult(fmt.Sprintf("%s: %v", tool, err))
}

// notFound phrases a missing path for each tool.
func notFound(tool, p string) Result {
	switch tool {
	case FileList, FileSearch:
		return errorf(`directory not found: %s; use file_list with path "." to see the workspace's files and folders`, p)
	case FileEdit:
		return errorf("file not found: %s; use file_list to see existing files, or file_write to create a new file", p)
	}
	return errorf("file not found: %s; use file_list to see existing files", p)
}
