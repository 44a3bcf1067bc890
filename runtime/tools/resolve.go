package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path"
	"strings"

	"flow/bufferfs"
)

// Small models often name a file by a path it does not have: a made-up
// leading folder ("src/inventory.go" for "inventory.go") or the bare name
// of a file in a subfolder. file_read and file_edit, whose file must
// exist, then use the one existing file the path can only mean and say so
// in the result's "note"; with no such file, or with several, the call
// fails as before. file_write never does this: it creates what it is told.

// maxResolveVisited bounds the walk that looks for a bare file name.
const maxResolveVisited = 5000

// resolveMissing returns the existing file a missing path p stands for:
// the longest existing suffix of p (leading folders dropped), else, for a
// bare name, the only file of that name in the workspace.
func (r *Registry) resolveMissing(ctx context.Context, p string) (string, bool) {
	clean := strings.TrimPrefix(path.Clean(strings.ReplaceAll(p, `\`, "/")), "/")
	parts := strings.Split(clean, "/")
	for i := 1; i < len(parts); i++ {
		cand := strings.Join(parts[i:], "/")
		if info, err := r.fs.Stat(ctx, cand); err == nil && info.Exists {
			return cand, true
		}
	}
	base := parts[0]
	if len(parts) > 1 || base == "" || base == "." || base == ".." {
		return "", false
	}
	var found []string
	visited := 0
	err := r.fs.Walk(ctx, ".", func(q string, _ bufferfs.Info) error {
		if visited++; visited > maxResolveVisited {
			found = nil // too many files to be sure the name is unique
			return fs.SkipAll
		}
		if path.Base(q) == base {
			if found = append(found, q); len(found) > 1 {
				return fs.SkipAll
			}
		}
		return nil
	})
	if (err != nil && !errors.Is(err, fs.SkipAll)) || len(found) != 1 {
		return "", false
	}
	return found[0], true
}

// withNote adds a "note" field to a JSON object result, when it fits.
func withNote(res Result, note string) Result {
	raw, err := json.Marshal(note)
	if err != nil || !strings.HasSuffix(res.Content, "}") || len(res.Content)+len(raw)+10 > MaxResultChars {
		return res
	}
	body := strings.TrimSuffix(res.Content, "}")
	sep := ","
	if strings.HasSuffix(strings.TrimSpace(body), "{") {
		sep = ""
	}
	res.Content = body + sep + `"note":` + string(raw) + "}"
	return res
}

// resolvedNote is the note of a call that used another path.
func resolvedNote(asked, used string) string {
	return asked + " does not exist; used " + used + ", the only file it can mean. Use the path " + used + " from now on."
}

// missingAlternative returns the file a path that failed with err stands
// for, when err says the path does not exist and one file fits.
func (r *Registry) missingAlternative(ctx context.Context, p string, err error) (string, bool) {
	if !errors.Is(err, bufferfs.ErrNotFound) && !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	alt, ok := r.resolveMissing(ctx, p)
	return alt, ok && alt != p
}
