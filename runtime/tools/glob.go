package tools

import (
	"fmt"
	"path"
	"strings"

	"flow/bufferfs"
)

// maxGlobChars bounds a glob pattern.
const maxGlobChars = 1024

// glob is a compiled file_search glob. Segments are matched with
// path.Match; a "**" segment matches any number of path segments (zero
// included). A pattern without "/" is matched against the base name, so
// "*.go" finds Go files at any depth.
type glob struct {
	segs     []string
	baseOnly bool
}

// compileGlob checks a glob pattern and splits it into segments.
func compileGlob(pattern string) (*glob, error) {
	if len([]rune(pattern)) > maxGlobChars {
		return nil, fmt.Errorf("glob is longer than %d characters", maxGlobChars)
	}
	g := &glob{baseOnly: !strings.Contains(pattern, "/")}
	for _, s := range strings.Split(strings.Trim(pattern, "/"), "/") {
		if s == "" || s == "." {
			continue
		}
		if s != "**" {
			if _, err := path.Match(s, ""); err != nil {
				return nil, fmt.Errorf("bad segment %q: %v", s, err)
			}
		}
		// Consecutive "**" segments mean the same as one.
		if s == "**" && len(g.segs) > 0 && g.segs[len(g.segs)-1] == "**" {
			continue
		}
		g.segs = append(g.segs, s)
	}
	return g, nil
}

// match reports whether the slash-separated relative path p matches.
func (g *glob) match(p string) bool {
	if len(g.segs) == 0 {
		return true
	}
	if g.baseOnly {
		ok, _ := path.Match(g.segs[0], path.Base(p))
		return ok || g.segs[0] == "**"
	}
	return bufferfs.MatchSegments(g.segs, strings.Split(p, "/"))
}
