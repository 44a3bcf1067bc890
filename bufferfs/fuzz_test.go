package bufferfs_test

import (
	"errors"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"flow/bufferfs"
)

func FuzzValidPath(f *testing.F) {
	for _, seed := range []string{
		"", ".", "./", "a.txt", "src/main.go", "a//b/./c", "../x", "a/../..", ".git/config",
		".GIT/HEAD", "sub/.Git/x", "/etc/passwd", `C:\x`, "c:foo", `\\server\share`, "a\x00b",
		path32, path33, path1024, path1025, "…/ü", "a/.gitx/.git.", " .git", "..a/b..",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		clean, err := bufferfs.ValidPath(p)
		if err != nil {
			if !errors.Is(err, bufferfs.ErrInvalidPath) {
				t.Errorf("ValidPath(%q) = %v, want an ErrInvalidPath error", p, err)
			}
			if clean != "" {
				t.Errorf("ValidPath(%q) = %q with error, want \"\"", p, clean)
			}
			return
		}
		if clean == "" || strings.HasPrefix(clean, "/") || strings.ContainsAny(clean, "\\\x00") {
			t.Errorf("ValidPath(%q) = %q, want a relative path without backslash or NUL", p, clean)
		}
		if utf8.RuneCountInString(p) > bufferfs.MaxPathChars {
			t.Errorf("ValidPath(%q) accepted %d characters", p, utf8.RuneCountInString(p))
		}
		if clean != path.Clean(clean) {
			t.Errorf("ValidPath(%q) = %q, which is not clean", p, clean)
		}
		comps := strings.Split(clean, "/")
		if len(comps) > bufferfs.MaxPathComponents {
			t.Errorf("ValidPath(%q) = %q with %d components", p, clean, len(comps))
		}
		for _, c := range comps {
			if c == ".." || strings.EqualFold(c, ".git") || c == "" || c == "." && clean != "." {
				t.Errorf("ValidPath(%q) = %q with component %q", p, clean, c)
			}
		}
		if len(clean) >= 2 && clean[1] == ':' && strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", rune(clean[0])) {
			t.Errorf("ValidPath(%q) = %q, a Windows drive path", p, clean)
		}
		// Accepting is stable: a cleaned path validates to itself.
		if again, err := bufferfs.ValidPath(clean); err != nil || again != clean {
			t.Errorf("ValidPath(ValidPath(%q)) = %q, %v; want %q", p, again, err, clean)
		}
	})
}
