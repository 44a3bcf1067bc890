package lang

import (
	"regexp"
	"strings"
)

// line is what a line scanner makes of an unindented line.
type line struct {
	kind  Kind
	name  string
	names []string // exported without being declared
	test  bool
	// lead is true for a comment or decorator line: it belongs to the item
	// that follows.
	lead bool
}

// syntax is what the line scanner knows of a language.
type syntax struct {
	classify    func(text string) line
	lineComment string
	// python selects triple-quoted strings and class methods; otherwise
	// the scanner follows block comments and template literals.
	python bool
}

var (
	python     = syntax{classify: pythonLine, lineComment: "#", python: true}
	javascript = syntax{classify: javascriptLine, lineComment: "//"}
)

var (
	pyDef    = regexp.MustCompile(`^(?:async\s+)?(def|class)\s+([A-Za-z_][A-Za-z0-9_]*)(.*)`)
	pyAssign = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=[^=]`)
	// pyBodyItem is an indented line that sets the indentation of a class
	// body's methods: a def, a class or a decorator.
	pyBodyItem = regexp.MustCompile(`^([ \t]+)(?:@|(?:async\s+)?(?:def|class)\b)`)
	pyMethod   = regexp.MustCompile(`^[ \t]+(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)`)
)

// pythonLine classifies an unindented Python line.
func pythonLine(text string) line {
	switch {
	case strings.HasPrefix(text, "#"), strings.HasPrefix(text, "@"):
		return line{lead: true}
	case strings.HasPrefix(text, "import "), strings.HasPrefix(text, "from "):
		return line{kind: Import}
	}
	if m := pyDef.FindStringSubmatch(text); m != nil {
		if m[1] == "class" {
			test := strings.HasPrefix(m[2], "Test") || strings.Contains(m[3], "TestCase")
			return line{kind: Class, name: m[2], test: test}
		}
		return line{kind: Func, name: m[2], test: strings.HasPrefix(m[2], "test")}
	}
	if m := pyAssign.FindStringSubmatch(text); m != nil {
		return line{kind: Var, name: m[1]}
	}
	return line{kind: Other}
}

// jsDecls recognise JavaScript and TypeScript declarations by their first
// line; the last submatch is the name.
var jsDecls = []struct {
	re   *regexp.Regexp
	kind func(m []string) Kind
}{
	{regexp.MustCompile(`^(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)`),
		func([]string) Kind { return Func }},
	{regexp.MustCompile(`^(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)`),
		func([]string) Kind { return Class }},
	{regexp.MustCompile(`^(?:export\s+)?(?:declare\s+)?(const\s+enum|const|let|var|enum|interface|type)\s+([A-Za-z_$][\w$]*)`),
		func(m []string) Kind {
			switch m[1] {
			case "const":
				return Const
			case "let", "var":
				return Var
			}
			return Type
		}},
}

var (
	jsExport     = regexp.MustCompile(`^(?:module\.)?exports\.([A-Za-z_$][\w$]*)\s*=`)
	jsExportList = regexp.MustCompile(`^module\.exports\s*=\s*\{([^}]*)`)
)

// javascriptLine classifies an unindented JavaScript or TypeScript line.
func javascriptLine(text string) line {
	switch {
	case strings.HasPrefix(text, "//"), strings.HasPrefix(text, "/*"), strings.HasPrefix(text, "@"):
		return line{lead: true}
	case strings.HasPrefix(text, "import "), strings.HasPrefix(text, "import{"):
		return line{kind: Import}
	}
	for _, d := range jsDecls {
		if m := d.re.FindStringSubmatch(text); m != nil {
			return line{kind: d.kind(m), name: m[len(m)-1]}
		}
	}
	if m := jsExport.FindStringSubmatch(text); m != nil {
		return line{kind: Export, names: []string{m[1]}}
	}
	if m := jsExportList.FindStringSubmatch(text); m != nil {
		// Only the names on the line itself: "{ a, b: c }" exports a and b.
		var names []string
		for _, part := range strings.Split(m[1], ",") {
			key, _, _ := strings.Cut(part, ":")
			if key = strings.TrimSpace(key); key != "" {
				names = append(names, key)
			}
		}
		return line{kind: Export, names: names}
	}
	return line{kind: Other}
}

// lineDecls splits Python or JavaScript/TypeScript source into items by
// its unindented lines: an item starts at an unindented line, with the
// comment and decorator lines right above it, and ends before the next
// item; an unindented line of closing brackets belongs to the item above.
// Lines inside a multi-line string or block comment never start an item.
// ok is false when src ends inside a string or block comment, since where
// its items end cannot be told.
func lineDecls(src string, l syntax) ([]Decl, bool) {
	var (
		out      []Decl
		open     = -1 // index in out of the item being read
		lead     = -1 // offset of pending comment or decorator lines, -1 when none
		inString string
		inBlock  bool
		// methods is the indentation of the open class's methods, "" until
		// the first def, class or decorator in its body sets it.
		methods string
	)
	finish := func(at int) {
		if open >= 0 {
			out[open].End = trimEnd(src, out[open].CodeStart, at)
			open = -1
		}
	}
	off := 0
	for _, raw := range strings.SplitAfter(src, "\n") {
		start := off
		off += len(raw)
		text := strings.TrimRight(raw, "\r\n")
		continued := inString != "" || inBlock
		inString, inBlock = l.scan(text, inString, inBlock)
		if continued {
			continue
		}
		if text == "" {
			// A comment that a blank line parts from what follows is not
			// its leading comment: it stays with the item above.
			lead = -1
			continue
		}
		if text[0] == ' ' || text[0] == '\t' || closing(text) {
			// Comment lines followed by indented code were inside the item
			// above (or lead nowhere): not a leading comment.
			lead = -1
			if l.python && open >= 0 && out[open].Kind == Class {
				methods = classMember(&out[open], text, methods)
			}
			continue
		}
		k := l.classify(text)
		if k.lead {
			if lead < 0 {
				lead = start
			}
			continue
		}
		d := Decl{Kind: k.kind, Name: k.name, Names: k.names, Test: k.test, Start: start, CodeStart: start}
		if k.name != "" {
			d.Names = []string{k.name}
		}
		if lead >= 0 {
			d.Start, lead = lead, -1
		}
		finish(d.Start)
		out = append(out, d)
		open, methods = len(out)-1, ""
	}
	finish(len(src))
	return out, inString == "" && !inBlock
}

// classMember records the method an indented line of class c's body
// defines, when it is at the body's indentation, and returns that
// indentation (set by the body's first def, class or decorator line, so
// that the methods of a nested class are not the outer class's).
func classMember(c *Decl, text, methods string) string {
	if methods == "" {
		m := pyBodyItem.FindStringSubmatch(text)
		if m == nil {
			return ""
		}
		methods = m[1]
	}
	if rest, ok := strings.CutPrefix(text, methods); ok && rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		if m := pyMethod.FindStringSubmatch(text); m != nil {
			c.Members = append(c.Members, c.Name+"."+m[1])
		}
	}
	return methods
}

// closing reports whether an unindented line only closes brackets, with
// what may follow them on a closing line (`} from "x";`, `});`).
func closing(text string) bool {
	return strings.IndexByte(")]}", text[0]) >= 0
}

// scan follows Python triple-quoted strings, and JavaScript block comments
// and template literals, across lines: it returns the state after text
// given the state before it. It is rough (an escaped quote inside an
// ordinary string can mislead it), which only matters for text no
// formatter would write.
func (l syntax) scan(text, inString string, inBlock bool) (string, bool) {
	for i := 0; i < len(text); i++ {
		rest := text[i:]
		switch {
		case inBlock:
			if strings.HasPrefix(rest, "*/") {
				inBlock = false
				i++
			}
		case inString != "":
			if strings.HasPrefix(rest, inString) {
				i += len(inString) - 1
				inString = ""
			} else if text[i] == '\\' {
				i++
			}
		case l.python && (strings.HasPrefix(rest, `"""`) || strings.HasPrefix(rest, `'''`)):
			inString = rest[:3]
			i += 2
		case !l.python && text[i] == '`':
			inString = "`"
		case !l.python && strings.HasPrefix(rest, "/*"):
			inBlock = true
			i++
		case strings.HasPrefix(rest, l.lineComment):
			return inString, inBlock // the rest is a line comment
		case text[i] == '"' || text[i] == '\'':
			if j := strings.IndexByte(text[i+1:], text[i]); j >= 0 {
				i += j + 1
			}
		}
	}
	return inString, inBlock
}

// trimEnd returns the end of the item that starts at from and runs to at:
// trailing blank lines are not part of it, nor is the final line break.
func trimEnd(src string, from, at int) int {
	return from + len(strings.TrimRight(src[from:at], " \t\r\n"))
}
