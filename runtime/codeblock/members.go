package codeblock

import (
	"regexp"
	"slices"
	"strings"
)

// A small model asked for a changed Python method, or for a new test,
// often answers with the class around it holding only that method: in the
// evaluation, "I also added a test" came as `class SlugifyTest` with one
// test_ method, and replacing the file's class by it removed the class's
// two other tests. So a class whose block version lacks methods that the
// file's version has is merged, not replaced: the block's methods replace
// the file's of the same name, its new ones are added at the class's end,
// and the file's other methods stay (doc/design.md §6.7).

// pyMember is a line that starts a class body's item at its indentation:
// a def, a decorator or a comment before one; the submatch is a def's name.
var pyMember = regexp.MustCompile(`^(?:@|#|(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*))`)

// classParts is a Python class split at its methods: the head (the class
// line, its docstring and attributes), and each method with its
// decorators and leading comments, the blank lines after it included.
type classParts struct {
	head    string
	indent  string // the body's indentation
	names   []string
	methods []string
}

// splitClass splits the text of a Python class at the methods of its body.
// ok is false when the body has no method, or holds a line at the body's
// indentation that is not part of a method (code between methods, which a
// merge could not place).
func splitClass(text string) (classParts, bool) {
	lines := strings.SplitAfter(text, "\n")
	var p classParts
	start := -1 // the line the current method (with its lead lines) starts at
	lead := -1  // the first decorator or comment line before the next def
	cur := -1   // index in p.methods of the current method
	depth := 0  // open brackets of the lead lines so far (a decorator's arguments on several lines)
	var b strings.Builder
	flush := func(i int) {
		if cur >= 0 {
			p.methods[cur] = strings.Join(lines[start:i], "")
		}
	}
	for i, l := range lines {
		if i == 0 {
			continue
		}
		t := strings.TrimRight(l, "\r\n")
		if strings.TrimSpace(t) == "" {
			continue
		}
		ind := t[:len(t)-len(strings.TrimLeft(t, " \t"))]
		if p.indent == "" {
			p.indent = ind
		}
		if ind != p.indent {
			if lead >= 0 && depth <= 0 {
				// Deeper lines after a decorator that closed all its
				// brackets are a body, not the decorator's: the lead
				// lines belong to what came before, not to the next def.
				lead = -1
			}
			depth += bracketDepth(t)
			continue // inside a method, or a nested block of the head
		}
		m := pyMember.FindStringSubmatch(t[len(ind):])
		switch {
		case m != nil && m[1] != "":
			from := i
			if lead >= 0 {
				from = lead
			}
			if cur < 0 {
				b.WriteString(strings.Join(lines[:from], ""))
			} else {
				flush(from)
			}
			p.names = append(p.names, m[1])
			p.methods = append(p.methods, "")
			cur, start, lead = len(p.methods)-1, from, -1
		case m != nil:
			if lead < 0 {
				lead, depth = i, 0
			}
			depth += bracketDepth(t)
		case cur >= 0:
			return classParts{}, false // a statement between methods
		default:
			lead = -1 // the head's docstring or attributes
		}
	}
	if cur < 0 {
		return classParts{}, false
	}
	flush(len(lines))
	p.head = b.String()
	return p, true
}

// mergeClass returns the file's class old with the block's class new
// merged into it, when new lacks a method old has; ok is false when a
// plain replacement is right (new has every method of old) or when
// either class cannot be split at its methods.
func mergeClass(old, new string) (string, bool) {
	op, ok := splitClass(old)
	if !ok {
		return "", false
	}
	np, ok := splitClass(new)
	if !ok {
		return "", false
	}
	lacks := false
	for _, n := range op.names {
		if slices.Index(np.names, n) < 0 {
			lacks = true
		}
	}
	if !lacks {
		return "", false
	}
	reindent := func(m string) string {
		if np.indent == op.indent {
			return m
		}
		ls := strings.SplitAfter(m, "\n")
		for i, l := range ls {
			if r, ok := strings.CutPrefix(l, np.indent); ok {
				ls[i] = op.indent + r
			}
		}
		return strings.Join(ls, "")
	}
	// The block's head replaces the file's only when it holds more than
	// the class line (a docstring, attributes): a bare class line keeps
	// the file's docstring.
	head := op.head
	if strings.Count(strings.TrimSpace(np.head), "\n") > 0 {
		head = np.head
	}
	var b strings.Builder
	b.WriteString(head)
	for i, n := range op.names {
		m := op.methods[i]
		if j := slices.Index(np.names, n); j >= 0 {
			m = withBreak(reindent(np.methods[j]), m)
		}
		b.WriteString(m)
	}
	for j, n := range np.names {
		if slices.Index(op.names, n) >= 0 {
			continue
		}
		cur := b.String()
		if !strings.HasSuffix(cur, "\n\n") {
			if !strings.HasSuffix(cur, "\n") {
				b.WriteString("\n")
			}
			b.WriteString("\n")
		}
		b.WriteString(reindent(np.methods[j]))
	}
	return strings.TrimRight(b.String(), "\n"), true
}

// withBreak returns m ending in the line breaks that old (the method it
// replaces) ended in, so that the blank lines between methods stay.
func withBreak(m, old string) string {
	trail := old[len(strings.TrimRight(old, "\n")):]
	return strings.TrimRight(m, "\n") + trail
}

// bracketDepth is the brackets line opens minus those it closes, strings
// and comments not told apart: enough to tell a decorator whose arguments
// go on to the next lines from one that ends on its line.
func bracketDepth(line string) int {
	n := 0
	for _, r := range line {
		switch r {
		case '(', '[', '{':
			n++
		case ')', ']', '}':
			n--
		}
	}
	return n
}
