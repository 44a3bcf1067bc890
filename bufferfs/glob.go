package bufferfs

import (
	"path"
	"strings"
)

// MatchGlob matches a slash-separated glob against the slash-separated
// workspace path p: each segment with path.Match, "**" for any number of
// segments (zero included), and a glob without "/" against the base name,
// so "*.go" or "Makefile" match at any depth. An empty glob matches
// nothing. The file tools' search, the operator's protected globs and the
// test-file globs of verification all match with it.
func MatchGlob(glob, p string) bool {
	glob = strings.Trim(glob, "/")
	if glob == "" {
		return false
	}
	if !strings.Contains(glob, "/") {
		if glob == "**" {
			return true
		}
		ok, _ := path.Match(glob, path.Base(p))
		return ok
	}
	return MatchSegments(strings.Split(glob, "/"), strings.Split(p, "/"))
}

// MatchSegments matches glob segments against path segments with dynamic
// programming: ok[j] tells whether the pattern suffix being built matches
// the path suffix from segment j. It runs in O(len(pat) * len(segs)), so a
// pattern of many "**" cannot make it exponential.
func MatchSegments(pat, segs []string) bool {
	n := len(segs)
	// next[j]: pattern suffix pat[i+1:] matches segs[j:].
	next := make([]bool, n+1)
	next[n] = true // the empty pattern matches the empty path
	cur := make([]bool, n+1)
	for i := len(pat) - 1; i >= 0; i-- {
		if pat[i] == "**" {
			// ** matches segs[j:k] for any k >= j.
			cur[n] = next[n]
			for j := n - 1; j >= 0; j-- {
				cur[j] = next[j] || cur[j+1]
			}
		} else {
			cur[n] = false
			for j := n - 1; j >= 0; j-- {
				ok, _ := path.Match(pat[i], segs[j])
				cur[j] = ok && next[j+1]
			}
		}
		next, cur = cur, next
	}
	return next[0]
}
