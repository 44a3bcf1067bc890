package bufferfs

import (
	"path"
	"strings"
)

// errCheckDefinition refuses a write to a file the operator protected by
// glob ([verify] protect): a definition of what a check runs.
var errCheckDefinition = rule(ErrProtected, "this file defines what a check runs and is protected by the operator configuration ([verify] protect)",
	"leave the check definitions alone and change the code under test instead")

// checkProtectGlobs refuses clean (a valid, cleaned workspace path) when it
// or one of its parent directories matches a protected glob. It is kept
// apart from the protected paths, which are absolute and matched by
// identity too: globs name workspace files that may not exist yet.
// Matching is case-insensitive, like the protected names, so that a
// case-insensitive file system cannot be used to slip past it.
func (d *Disk) checkProtectGlobs(clean string) error {
	if len(d.protectGlobs) == 0 || clean == "." || !d.trusted {
		// A read-only Disk refuses the write anyway, and says why.
		return nil
	}
	p := strings.ToLower(clean)
	for {
		for _, g := range d.protectGlobs {
			if MatchGlob(g, p) {
				return errCheckDefinition
			}
		}
		dir := path.Dir(p)
		if dir == "." || dir == p {
			return nil
		}
		p = dir
	}
}

// lowerGlobs returns the usable globs of list, lower-cased and trimmed of
// slashes; empty ones are dropped.
func lowerGlobs(list []string) []string {
	var out []string
	for _, g := range list {
		g = strings.Trim(strings.ToLower(g), "/")
		if g != "" {
			out = append(out, g)
		}
	}
	return out
}
