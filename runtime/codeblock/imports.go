package codeblock

import (
	"regexp"
	"slices"
	"strings"
)

// addImports adds to file target the imports of the segment p that the
// file lacks. A Go import is the same when its path is; a Python one when
// its statement is; a JavaScript one when the file imports from the same
// module at all (merging two import clauses is left to the model).
func (c *changer) addImports(target string, p parsed) {
	for _, d := range p.decls {
		if !d.isImport {
			continue
		}
		fp := c.parsed[target]
		if d.spec != "" {
			c.addGoImport(target, fp, d.spec)
			continue
		}
		stmt := d.code(p.src)
		if slices.ContainsFunc(fp.decls, func(e decl) bool { return e.isImport && sameImport(e.code(fp.src), stmt) }) {
			continue
		}
		at, before, after := fp.importsEnd()
		c.record(target, fp.src[:at]+before+stmt+after+fp.src[at:], "", false)
	}
}

// addGoImport adds one import spec to a Go file.
func (c *changer) addGoImport(target string, fp parsed, spec string) {
	if slices.ContainsFunc(fp.decls, func(e decl) bool { return e.isImport && importPath(e.spec) == importPath(spec) }) {
		return
	}
	src, at := fp.src, fp.goImports
	var text string
	switch {
	case !slices.ContainsFunc(fp.decls, func(e decl) bool { return e.isImport }):
		text = src[:at] + "\n\nimport " + spec + src[at:]
	case fp.goGrouped:
		at = lineStart(src, at-1) // the line of the closing parenthesis
		text = src[:at] + "\t" + spec + "\n" + src[at:]
	default: // import "x": make it a group of both
		from := fp.goImportDecl
		old := strings.TrimSpace(strings.TrimPrefix(src[from:at], "import"))
		text = src[:from] + "import (\n\t" + old + "\n\t" + spec + "\n)" + src[at:]
	}
	c.record(target, text, "", false)
}

// importPath is the quoted path of a Go import spec.
func importPath(spec string) string {
	f := strings.Fields(spec)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

var jsModule = regexp.MustCompile(`from\s*(["'][^"']+["'])|^import\s*(["'][^"']+["'])`)

// sameImport reports whether two Python or JavaScript import statements
// are the same (by their words), or import from the same JavaScript
// module.
func sameImport(a, b string) bool {
	if strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ") {
		return true
	}
	if strings.HasPrefix(a, "from ") || strings.HasPrefix(b, "from ") {
		return false // Python: `from x import y` and `from x import z` are both needed
	}
	ma, mb := jsModule.FindStringSubmatch(a), jsModule.FindStringSubmatch(b)
	return ma != nil && mb != nil && strings.Trim(ma[1]+ma[2], `"'`) == strings.Trim(mb[1]+mb[2], `"'`)
}

// importsEnd returns where a new import statement goes in a Python or
// JavaScript file, and the line breaks around it: after the last import,
// else after a leading docstring, else at the top.
func (fp parsed) importsEnd() (at int, before, after string) {
	last := -1
	for i, d := range fp.decls {
		if d.isImport {
			last = i
		}
	}
	if last >= 0 {
		return fp.decls[last].end, "\n", ""
	}
	if len(fp.decls) > 0 {
		first := fp.decls[0]
		head := fp.src[first.body:first.end]
		if first.name == "" && (strings.HasPrefix(head, `"""`) || strings.HasPrefix(head, `'''`) || strings.HasPrefix(head, `"`)) {
			return first.end, "\n\n", ""
		}
	}
	return 0, "", "\n\n"
}
