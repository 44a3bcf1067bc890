package imports

import (
	"go/ast"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// edit returns src without the unused import specs and with the added
// paths imported: into the first parenthesised import declaration that
// stays; else into a single-spec declaration, made a group of them all,
// as goimports does; else in a declaration of their own after the package
// clause. The caller formats the result.
func edit(fset *token.FileSet, f *ast.File, src string, unused []*ast.ImportSpec, added []string) (string, bool) {
	ed := &editor{fset: fset, src: src}
	group, single, ok := ed.cutUnused(f, unused)
	if !ok {
		return "", false
	}
	if len(added) > 0 {
		ed.insert(f, group, single, unused, added)
	}
	return ed.apply(), true
}

// change replaces src[from:to] with text; the changes of one edit do not
// overlap.
type change struct {
	from, to int
	text     string
}

// editor collects the changes of one edit of src.
type editor struct {
	fset    *token.FileSet
	src     string
	changes []change
}

func (ed *editor) offset(p token.Pos) int { return ed.fset.Position(p).Offset }

func (ed *editor) change(from, to int, text string) {
	ed.changes = append(ed.changes, change{from, to, text})
}

// cutUnused cuts the unused specs, and a declaration none of whose specs
// stays, with their doc comments. It returns the first parenthesised and
// the first single-spec import declaration that stay; ok is false when an
// unused spec shares its line with another one.
func (ed *editor) cutUnused(f *ast.File, unused []*ast.ImportSpec) (group, single *ast.GenDecl, ok bool) {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		var gone []*ast.ImportSpec
		for _, s := range g.Specs {
			if is := s.(*ast.ImportSpec); slices.Contains(unused, is) {
				gone = append(gone, is)
			}
		}
		if len(gone) == len(g.Specs) {
			ed.cutLines(g.Doc, g.Pos(), g.End())
			continue
		}
		switch {
		case group == nil && g.Lparen.IsValid():
			group = g
		case single == nil && !g.Lparen.IsValid():
			single = g
		}
		for _, is := range gone {
			if !ed.cutSpec(is) {
				return nil, nil, false
			}
		}
	}
	return group, single, true
}

// cutLines cuts the whole lines from from (or its doc comment) to to.
func (ed *editor) cutLines(doc *ast.CommentGroup, from, to token.Pos) {
	if doc != nil {
		from = doc.Pos()
	}
	ed.change(lineStart(ed.src, ed.offset(from)), lineEnd(ed.src, ed.offset(to)), "")
}

// cutSpec cuts the lines of the spec is, which must be alone on them.
func (ed *editor) cutSpec(is *ast.ImportSpec) bool {
	from, to := is.Pos(), specEnd(is)
	if is.Doc != nil {
		from = is.Doc.Pos()
	}
	a, b := lineStart(ed.src, ed.offset(from)), lineEnd(ed.src, ed.offset(to))
	if strings.TrimSpace(ed.src[a:ed.offset(from)]) != "" || strings.TrimSpace(ed.src[ed.offset(to):b]) != "" {
		return false // another spec shares its line
	}
	ed.change(a, b, "")
	return true
}

// insert imports the added paths into group, else single, else a new
// declaration after the package clause.
func (ed *editor) insert(f *ast.File, group, single *ast.GenDecl, unused []*ast.ImportSpec, added []string) {
	var specs string
	for _, p := range added {
		specs += "\t" + strconv.Quote(p) + "\n"
	}
	switch {
	case group != nil:
		ed.insertIntoGroup(group, unused, specs)
	case single != nil:
		ed.groupWithSingle(single, specs)
	default:
		ed.insertDecl(f, added, specs)
	}
}

// insertIntoGroup inserts specs into the parenthesised declaration group
// where groupInsert says.
func (ed *editor) insertIntoGroup(group *ast.GenDecl, unused []*ast.ImportSpec, specs string) {
	at, apart := groupInsert(ed.fset, ed.src, group, unused)
	switch {
	case at < 0: // `import ("a")` on one line
		rparen := ed.offset(group.Rparen)
		ed.change(rparen, rparen, "\n"+specs)
	case apart:
		ed.change(at, at, specs+"\n")
	default:
		ed.change(at, at, specs)
	}
}

// groupWithSingle makes the single-spec declaration single a group of
// specs and its spec, set off by a blank line when that spec is of another
// module.
func (ed *editor) groupWithSingle(single *ast.GenDecl, specs string) {
	is := single.Specs[0].(*ast.ImportSpec)
	from, to := ed.offset(is.Pos()), ed.offset(specEnd(is))
	apart := ""
	if p, _ := strconv.Unquote(is.Path.Value); !standard(p) {
		apart = "\n"
	}
	ed.change(from, from, "(\n"+specs+apart+"\t")
	ed.change(to, to, "\n)")
}

// insertDecl adds a declaration of the added paths after the package
// clause.
func (ed *editor) insertDecl(f *ast.File, added []string, specs string) {
	src := ed.src
	at := lineEnd(src, ed.offset(f.Name.End()))
	text := "\nimport "
	if at == len(src) && !strings.HasSuffix(src, "\n") {
		text = "\n" + text
	}
	if len(added) == 1 {
		text += strconv.Quote(added[0])
	} else {
		text += "(\n" + specs + ")"
	}
	ed.change(at, at, text+"\n")
}

// apply returns src with the changes made.
func (ed *editor) apply() string {
	// Apply from the end, so that earlier offsets hold; at one offset, a
	// cut before an insertion, so that it cannot cut what was inserted.
	slices.SortFunc(ed.changes, func(a, b change) int {
		if a.from != b.from {
			return b.from - a.from
		}
		return b.to - a.to
	})
	out := ed.src
	for _, c := range ed.changes {
		out = out[:c.from] + c.text + out[c.to:]
	}
	return out
}

// specEnd is the end of an import spec with its line comment.
func specEnd(is *ast.ImportSpec) token.Pos {
	if is.Comment != nil {
		return is.Comment.End()
	}
	return is.End()
}

// groupInsert returns where new standard imports go in the parenthesised
// import declaration g: after the last standard import that stays, else
// before the first import of another module (apart: the new ones are to
// be set off from it by a blank line), else on the line of the closing
// parenthesis; -1 when that line is the one of the opening parenthesis.
func groupInsert(fset *token.FileSet, src string, g *ast.GenDecl, unused []*ast.ImportSpec) (at int, apart bool) {
	offset := func(p token.Pos) int { return fset.Position(p).Offset }
	var lastStd, firstOther *ast.ImportSpec
	for _, s := range g.Specs {
		is := s.(*ast.ImportSpec)
		if slices.Contains(unused, is) {
			continue
		}
		p, _ := strconv.Unquote(is.Path.Value)
		if standard(p) {
			lastStd = is
		} else if firstOther == nil {
			firstOther = is
		}
	}
	rparen := lineStart(src, offset(g.Rparen))
	switch {
	case lastStd != nil:
		if at := lineEnd(src, offset(specEnd(lastStd))); at <= rparen {
			return at, false
		}
	case firstOther != nil:
		from := firstOther.Pos()
		if firstOther.Doc != nil {
			from = firstOther.Doc.Pos()
		}
		if at := lineStart(src, offset(from)); at > offset(g.Lparen) {
			return at, true
		}
	}
	if rparen <= offset(g.Lparen) {
		return -1, false
	}
	return rparen, false
}

// lineStart is the offset of the start of the line holding offset i.
func lineStart(s string, i int) int {
	return strings.LastIndexByte(s[:i], '\n') + 1
}

// lineEnd is the offset after the line break that ends the line holding
// offset i (or the end of s).
func lineEnd(s string, i int) int {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(s)
}
