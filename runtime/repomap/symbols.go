package repomap

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
)

// Symbols returns the top-level definitions of a source file of lang, in
// file order, at most maxSymbolsFile of them: Go functions (methods as
// "Type.Method"), types, constants and variables; Python functions and
// classes with their methods ("Class.method"); JavaScript and TypeScript
// functions, classes, top-level bindings and exports.
func Symbols(lang string, src []byte) []string {
	var out []string
	switch lang {
	case "go":
		out = goSymbols(src)
	case "python":
		out = pySymbols(src)
	case "javascript", "typescript":
		out = jsSymbols(src)
	}
	if len(out) > maxSymbolsFile {
		out = append(out[:maxSymbolsFile:maxSymbolsFile], "…")
	}
	return out
}

// goSymbols parses src; a file that does not parse gives what parsed
// before the error.
func goSymbols(src []byte) []string {
	f, _ := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	if f == nil {
		return nil
	}
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				if t := recvType(d.Recv.List[0].Type); t != "" {
					name = t + "." + name
				}
			}
			out = append(out, name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					out = append(out, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name != "_" {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// recvType is the receiver's type name without pointer or type arguments.
func recvType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

var (
	pyDefRE   = regexp.MustCompile(`^(\s*)(?:async\s+)?(def|class)\s+([A-Za-z_][A-Za-z0-9_]*)`)
	pyAssigRE = regexp.MustCompile(`^([A-Z_][A-Z0-9_]*)\s*(?::[^=]*)?=`)
)

// pySymbols reads top-level def/class lines, the methods of top-level
// classes (one indentation level in), and UPPER_CASE constants.
func pySymbols(src []byte) []string {
	var out []string
	class, classIndent := "", ""
	for _, line := range strings.Split(string(src), "\n") {
		if m := pyDefRE.FindStringSubmatch(line); m != nil {
			indent, kind, name := m[1], m[2], m[3]
			switch {
			case indent == "":
				out = append(out, name)
				class, classIndent = "", ""
				if kind == "class" {
					class = name
				}
			case class != "" && kind == "def" && (classIndent == "" || indent == classIndent):
				classIndent = indent
				out = append(out, class+"."+name)
			}
			continue
		}
		if m := pyAssigRE.FindStringSubmatch(line); m != nil {
			out = append(out, m[1])
			class = ""
		} else if line != "" && line[0] != ' ' && line[0] != '\t' && line[0] != '#' && line[0] != ')' && line[0] != ']' && line[0] != '}' {
			class = "" // another top-level statement ends the class body
		}
	}
	return out
}

var jsDefRE = []*regexp.Regexp{
	regexp.MustCompile(`^(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)`),
	regexp.MustCompile(`^(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)`),
	regexp.MustCompile(`^(?:export\s+)?(?:declare\s+)?(?:const|let|var|enum|interface|type)\s+([A-Za-z_$][\w$]*)`),
	regexp.MustCompile(`^(?:module\.)?exports\.([A-Za-z_$][\w$]*)\s*=`),
}

var jsExportsRE = regexp.MustCompile(`^module\.exports\s*=\s*\{([^}]*)\}?`)

// jsSymbols reads top-level (unindented) definitions and exports.
func jsSymbols(src []byte) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, line := range strings.Split(string(src), "\n") {
		for _, re := range jsDefRE {
			if m := re.FindStringSubmatch(line); m != nil {
				add(m[1])
				break
			}
		}
		if m := jsExportsRE.FindStringSubmatch(line); m != nil {
			for _, part := range strings.Split(m[1], ",") {
				name, _, _ := strings.Cut(strings.TrimSpace(part), ":")
				add(strings.TrimSpace(name))
			}
		}
	}
	return out
}
