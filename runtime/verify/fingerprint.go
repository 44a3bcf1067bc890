package verify

import (
	"context"
	"fmt"
	"slices"

	"flow/bufferfs"
)

// Fingerprints returns the SHA-256 of the raw bytes of every path, as
// computed by [bufferfs.FS.Stat], with "" for a path where no file exists.
// It stops at the first error (a path that became a symlink, a replaced
// root, cancellation): the caller must then treat freshness as unknown.
func Fingerprints(ctx context.Context, fsys bufferfs.FS, paths []string) (map[string]string, error) {
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("fingerprint changed files: %w", err)
		}
		info, err := fsys.Stat(ctx, p)
		if err != nil {
			return out, fmt.Errorf("fingerprint %s: %w", p, err)
		}
		if info.Exists {
			out[p] = info.SHA256
		} else {
			out[p] = ""
		}
	}
	return out, nil
}

// Changed returns the paths whose fingerprint differs between before and
// after, including paths present in only one of them, in sorted order.
func Changed(before, after map[string]string) []string {
	var diff []string
	for p, h := range before {
		if a, ok := after[p]; !ok || a != h {
			diff = append(diff, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diff = append(diff, p)
		}
	}
	slices.Sort(diff)
	return diff
}
