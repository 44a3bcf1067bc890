package repomap

import "flow/runtime/lang"

// Symbols returns the top-level definitions of a source file of language,
// in file order, each once, at most maxSymbolsFile of them: Go functions
// (methods as "Type.Method"), types, constants and variables; Python
// functions, classes with their methods ("Class.method") and UPPER_CASE
// constants; JavaScript and TypeScript functions, classes, top-level
// bindings and exports. A Go file that does not parse gives what parsed
// before the error.
func Symbols(language string, src []byte) []string {
	decls, _ := lang.Decls(language, string(src))
	var out []string
	seen := map[string]bool{}
	add := func(names ...string) {
		for _, n := range names {
			// The blank identifier declares nothing, and a name a file
			// both declares and exports is one definition.
			if n != "" && n != "_" && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	for _, d := range decls {
		switch {
		case d.Kind == lang.Package || d.Kind == lang.Import || d.Kind == lang.Other:
			continue
		case language == "python" && d.Kind == lang.Var && !isConstantName(d.Name):
			// A module's other variables are mostly working state; its
			// constants are what a task names.
			continue
		}
		add(d.Names...)
		add(d.Members...)
	}
	if len(out) > maxSymbolsFile {
		out = append(out[:maxSymbolsFile:maxSymbolsFile], "…")
	}
	return out
}

// isConstantName reports whether a Python name is written as a constant:
// upper-case letters, digits and underscores, not starting with a digit.
func isConstantName(name string) bool {
	for i, c := range name {
		if !(c == '_' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return name != ""
}
