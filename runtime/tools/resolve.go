package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"

	"flow/bufferfs"
	"flow/runtime/repomap"
)

// Small models often name a file by a path it does not have: a made-up
// leading folder ("src/inventory.go" for "inventory.go"), the bare name
// of a file in a subfolder, or a file named after the function it wants
// ("src/camelCase.js" for the strings.js that defines camelCase). file_read
// and file_edit, whose file must exist, then use the one existing file the
// path can only mean and say so in the result's "note"; with no such file,
// or with several, the call fails as before. file_write never does this:
// it creates what it is told.

// maxResolveVisited bounds the walk that looks for a bare file name.
const maxResolveVisited = 5000

// resolveMissing returns the existing file a missing path p stands for,
// with the note that says so: the longest existing suffix of p (leading
// folders dropped); else, for a bare name, the only file of that name in
// the workspace; else the only source file of p's language that defines a
// top-level symbol named as p's file without its extension.
func (r *Registry) resolveMissing(ctx context.Context, p string) (string, string, bool) {
	clean := strings.TrimPrefix(path.Clean(strings.ReplaceAll(p, `\`, "/")), "/")
	parts := strings.Split(clean, "/")
	for i := 1; i < len(parts); i++ {
		cand := strings.Join(parts[i:], "/")
		if info, err := r.fs.Stat(ctx, cand); err == nil && info.Exists {
			return cand, resolvedNote(p, cand), true
		}
	}
	if alt, ok := r.bareName(ctx, parts); ok {
		return alt, resolvedNote(p, alt), true
	}
	stem := strings.TrimSuffix(path.Base(clean), path.Ext(clean))
	if alt, ok := r.definingFile(ctx, stem, path.Ext(clean)); ok {
		return alt, p + " does not exist; used " + alt + ", the only file that defines " + stem + ". Use the path " + alt + " from now on.", true
	}
	return "", "", false
}

// bareName returns the only file in the workspace named parts[0], when
// parts is a bare name.
func (r *Registry) bareName(ctx context.Context, parts []string) (string, bool) {
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

// definingFile returns the only source file with extension ext (or
// another of its language's) whose top-level symbols include name.
func (r *Registry) definingFile(ctx context.Context, name, ext string) (string, bool) {
	lang := repomap.Language("x" + ext)
	if name == "" || lang == "" {
		return "", false
	}
	m, err := repomap.Build(ctx, r.fs)
	if err != nil || m.Truncated {
		return "", false // a partial map cannot show the file is the only one
	}
	var found []string
	for _, f := range m.Files {
		if f.Language == lang && slices.Contains(f.Symbols, name) {
			found = append(found, f.Path)
		}
	}
	if len(found) != 1 {
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
// for, with the note that says so, when err says the path does not exist
// and one file fits.
func (r *Registry) missingAlternative(ctx context.Context, p string, err error) (string, string, bool) {
	if !errors.Is(err, bufferfs.ErrNotFound) && !errors.Is(err, fs.ErrNotExist) {
		return "", "", false
	}
	alt, note, ok := r.resolveMissing(ctx, p)
	return alt, note, ok && alt != p
}
