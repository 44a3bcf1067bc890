package tools

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"strings"

	"flow/bufferfs"
	"flow/internal/text"
	"flow/runtime/report"
)

//go:embed file_write.md
var fileWriteRaw string

var fileWriteDoc = strings.TrimSpace(fileWriteRaw)

// fileWriteArgs are the arguments of file_write.
type fileWriteArgs struct {
	Path    string `json:"path" desc:"file path relative to the workspace root"`
	Content string `json:"content" desc:"the complete new content of the file"`
}

// writeBody is the result of file_write.
type writeBody struct {
	Status string `json:"status"`
	Path   string `json:"path"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
	// EditorDiagnostics are the editor's error diagnostics for the file
	// right after the write (inside Neovim with a language server only).
	EditorDiagnostics *bufferfs.EditDiagnostics `json:"editor_diagnostics,omitempty"`
}

// fileWrite implements file_write.
func (r *Registry) fileWrite(ctx context.Context, args fileWriteArgs) Result {
	p := args.Path
	data := []byte(args.Content)
	if len(data) > bufferfs.MaxFileBytes {
		return errorf("content is %d bytes, over the %d-byte (256 KiB) limit; split it into several smaller files",
			len(data), bufferfs.MaxFileBytes)
	}
	var old bufferfs.File
	if r.opts.BeforeWrite != nil {
		info, err := r.fs.Stat(ctx, p)
		if err != nil {
			return fsError(FileWrite, p, err)
		}
		old.Info = info
		if info.Exists {
			f, err := r.fs.Read(ctx, p, bufferfs.MaxFileBytes)
			if err != nil {
				return fsError(FileWrite, p, err)
			}
			old = f
			old.Exists = true
		}
	}
	return r.apply(ctx, FileWrite, p, old, data, func(path string, diags *bufferfs.EditDiagnostics) any {
		return writeBody{Status: report.StatusOK, Path: path, Bytes: len(data), SHA256: sha256Hex(data), EditorDiagnostics: diags}
	})
}

// apply runs the BeforeWrite hook, writes data to p and builds the result
// with body(cleaned path, the editor's diagnostics after the write). The
// hook and the FS get the cleaned path.
func (r *Registry) apply(ctx context.Context, tool, p string, old bufferfs.File, data []byte, body func(path string, diags *bufferfs.EditDiagnostics) any) Result {
	p = cleanPath(old.Path, p)
	if len(data) > bufferfs.MaxFileBytes {
		return errorf("%s was not applied: %s would become %d bytes, over the %d-byte (256 KiB) file limit",
			tool, text.Truncate(p, 200), len(data), bufferfs.MaxFileBytes)
	}
	if r.opts.BeforeWrite != nil {
		if err := r.opts.BeforeWrite(ctx, p, old, data); err != nil {
			return errorf("%s was not applied, %s is unchanged: %v", tool, text.Truncate(p, 200), err)
		}
	}
	info, err := r.fs.Write(ctx, p, data, bufferfs.WriteOptions{})
	if err != nil {
		return fsError(tool, p, err)
	}
	changed := cleanPath(info.Path, p)
	b, err := report.Marshal(body(changed, info.Diagnostics))
	if err != nil || !fits(b) {
		// The bodies are small fixed shapes; keep the invariant regardless.
		b = []byte(fmt.Sprintf(`{"status":"ok","truncated":true,"bytes":%d}`, len(data)))
	}
	return Result{Status: report.StatusOK, Content: string(b), Changed: changed}
}

// sha256Hex returns the lower-case hex SHA-256 of data.
func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
