package bufferfs

import (
	"path"
	"strings"
	"unicode/utf8"
)

// Lexical path rules, in the order the reference program applies them; the
// first failure wins.
var (
	errEmptyPath = rule(ErrInvalidPath, "path must be a nonempty relative string",
		`give a path relative to the workspace root, such as "src/main.go"`)
	errLongPath = rule(ErrInvalidPath, "path exceeds 1024 characters", "use a shorter path")
	errAbsPath  = rule(ErrInvalidPath, "absolute and Windows-style paths are not allowed",
		`use a path relative to the workspace root with "/" separators, such as "src/main.go"`)
	errTraversal = rule(ErrInvalidPath, "parent traversal and .git access are not allowed",
		`remove ".." and ".git" from the path; only files inside the workspace can be used`)
	errDeepPath = rule(ErrInvalidPath, "path exceeds 32 components", "use a shallower path")
)

// ValidPath applies the lexical path rules of doc/design.md §4 and returns the
// cleaned, slash-separated relative path ("." for the root). It does not
// touch the file system: symlinks, hard links and the root's freshness are
// checked by [Disk] when the path is used. The error wraps [ErrInvalidPath].
func ValidPath(p string) (string, error) {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return "", errEmptyPath
	}
	if utf8.RuneCountInString(p) > MaxPathChars {
		return "", errLongPath
	}
	if p[0] == '/' || strings.IndexByte(p, '\\') >= 0 || hasDrive(p) {
		return "", errAbsPath
	}
	for c := range strings.SplitSeq(p, "/") {
		if c == ".." || strings.EqualFold(c, ".git") {
			return "", errTraversal
		}
	}
	clean := path.Clean(p)
	if hasDrive(clean) { // "./C:" cleans to a drive path
		return "", errAbsPath
	}
	if clean != "." && strings.Count(clean, "/")+1 > MaxPathComponents {
		return "", errDeepPath
	}
	return clean, nil
}

// hasDrive reports whether p starts with a Windows drive ("C:", "c:foo").
func hasDrive(p string) bool {
	if len(p) < 2 || p[1] != ':' {
		return false
	}
	c := p[0]
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// splitPath splits a cleaned relative path into its directory part ("." for
// the root) and its last component.
func splitPath(clean string) (dir, base string) {
	i := strings.LastIndexByte(clean, '/')
	if i < 0 {
		return ".", clean
	}
	return clean[:i], clean[i+1:]
}

// components returns the components of a cleaned relative path; the root
// has none.
func components(clean string) []string {
	if clean == "." {
		return nil
	}
	return strings.Split(clean, "/")
}
