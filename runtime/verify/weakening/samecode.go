package weakening

import "strings"

// SameCode reports whether before and after, two versions of the Go,
// Python or JavaScript/TypeScript file at p, hold the same code: equal
// once comments, blank lines and trailing whitespace are dropped, and (but
// for Python, where it is code) indentation. It is false for every other
// language, which it cannot read.
func SameCode(p string, before, after []byte) bool {
	fam := familyOf(p)
	if fam == famOther {
		return false
	}
	a, b := codeOnly(fam, string(before)), codeOnly(fam, string(after))
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// codeOnly returns the non-blank lines of src without comments, trailing
// whitespace and, outside Python, indentation.
func codeOnly(fam family, src string) []string {
	var out []string
	for _, l := range scan(fam, src) {
		s := strings.TrimRight(l.Code, " \t\r")
		if fam != famPython {
			s = strings.TrimLeft(s, " \t")
		}
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}
