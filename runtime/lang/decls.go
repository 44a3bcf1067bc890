package lang

import "strings"

// Kind is what a top-level item of source is.
type Kind string

// The kinds of [Decl].
const (
	// Package is a Go package clause.
	Package Kind = "package"
	// Import is an import declaration or statement.
	Import Kind = "import"
	// Func is a function.
	Func Kind = "func"
	// Method is a Go method, named "Type.Method".
	Method Kind = "method"
	// Type is a Go type declaration, or a TypeScript interface, type alias
	// or enum.
	Type Kind = "type"
	// Const is a Go constant declaration or a JavaScript const binding.
	Const Kind = "const"
	// Var is a Go variable declaration, a JavaScript let or var binding, or
	// a Python assignment to a name.
	Var Kind = "var"
	// Class is a Python or JavaScript class.
	Class Kind = "class"
	// Export is a JavaScript assignment to module.exports or exports.NAME,
	// which exports names without declaring them.
	Export Kind = "export"
	// Other is any other top-level statement, such as a Python docstring
	// or a call; it declares nothing and only bounds its neighbours.
	Other Kind = "other"
)

// Span is the byte range [Start, End) of source.
type Span struct {
	Start, End int
}

// Decl is one top-level item of source.
type Decl struct {
	Kind Kind
	// Name is what the item is known by when one version of it is matched
	// with another: "Median", "Stock.Remove" for a Go method, a Go group's
	// first name as written (even the blank identifier), the package name
	// of a Go package clause. It is "" for imports, exports and other
	// statements.
	Name string
	// Names are all the names the item declares or exports, in order: every
	// name of a Go group, the names a JavaScript export assigns. It holds
	// Name when Name is not "".
	Names []string
	// Members are the methods of a Python class, one indentation level in,
	// qualified by the class name ("Cart.total").
	Members []string
	// Test is true for a test: a Go Test, Benchmark, Fuzz or Example
	// function; a Python function whose name starts with "test", or a
	// class whose name starts with "Test" or that subclasses TestCase.
	Test bool
	// Start is where the item begins with its leading comment and
	// decorators, at the start of their first line; CodeStart is where the
	// item itself begins; End is just after its last byte, without the
	// blank lines and the line break that follow it.
	Start, CodeStart, End int
	// Specs are the spans of a Go import declaration's specs, each as
	// written ("\"sort\"", "str \"strings\"").
	Specs []Span
}

// Scans reports whether [Decls] reads source of language.
func Scans(language string) bool {
	switch language {
	case "go", "python", "javascript", "typescript":
		return true
	}
	return false
}

// Decls returns the top-level items of src, source of language, in file
// order. Go is parsed with go/parser, and may be a fragment of top-level
// declarations without a package clause. Python and JavaScript/TypeScript
// are read by their unindented lines, the way a formatter lays them out;
// source whose top-level code is indented (a fragment copied from inside a
// function) has no items.
//
// ok is false for Go that does not parse, and for other source that ends
// inside a string or a block comment; the items are then what was read
// before the trouble, whose names can still be listed but whose spans
// cannot be trusted for editing. For a language [Scans] does not accept,
// there are no items and ok is false.
func Decls(language, src string) ([]Decl, bool) {
	switch language {
	case "go":
		return goDecls(src)
	case "python":
		return lineDecls(src, python)
	case "javascript", "typescript":
		return lineDecls(src, javascript)
	}
	return nil, false
}

// lineStart returns the offset of the start of the line holding offset i.
func lineStart(src string, i int) int {
	return strings.LastIndexByte(src[:i], '\n') + 1
}
