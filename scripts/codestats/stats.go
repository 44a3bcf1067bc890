package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Func is one function's figures.
type Func struct {
	Pos   string // file:line
	Name  string // Func or Type.Method
	Lines int
	Cyclo int
}

// cyclomatic counts the complexity of a function body: 1, plus one for
// each branching statement and each short-circuit operator.
func cyclomatic(body ast.Node) int {
	n := 1
	ast.Inspect(body, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.FuncLit:
			return false // a closure is counted on its own, not here
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

// funcName is Func or Type.Method.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		}
		break
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}

// funcsOf returns the figures of every function declared in file.
func funcsOf(fset *token.FileSet, file *ast.File) []Func {
	var out []Func
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
		out = append(out, Func{
			Pos:   fmt.Sprintf("%s:%d", start.Filename, start.Line),
			Name:  funcName(fd),
			Lines: end.Line - start.Line + 1,
			Cyclo: cyclomatic(fd.Body),
		})
	}
	return out
}

// dirs expands the arguments: a folder, or a folder and all below it
// ("dir/...").
func dirs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		root, all := strings.CutSuffix(a, "/...")
		if !all {
			out = append(out, a)
			continue
		}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
					return filepath.SkipDir
				}
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// goFiles lists a folder's Go files, tests or not.
func goFiles(dir string, tests bool) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") != tests {
			continue
		}
		out = append(out, filepath.Join(dir, n))
	}
	return out, nil
}

// packageFuncs returns the figures of every non-test function in the
// folders the arguments name, folder by folder in the order given.
func packageFuncs(args []string) ([]string, map[string][]Func, error) {
	ds, err := dirs(args)
	if err != nil {
		return nil, nil, err
	}
	fset := token.NewFileSet()
	byDir := map[string][]Func{}
	for _, d := range ds {
		files, err := goFiles(d, false)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range files {
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, nil, err
			}
			byDir[d] = append(byDir[d], funcsOf(fset, f)...)
		}
	}
	return ds, byDir, nil
}

// mostComplex sorts fs most complex first (then longest first), keeps only
// the functions called name when name is set, and keeps the first top of
// them when top > 0.
func mostComplex(fs []Func, top int, name string) []Func {
	if name != "" {
		fs = slices.DeleteFunc(fs, func(f Func) bool { return f.Name != name })
	}
	slices.SortStableFunc(fs, func(a, b Func) int {
		if a.Cyclo != b.Cyclo {
			return b.Cyclo - a.Cyclo
		}
		return b.Lines - a.Lines
	})
	if top > 0 && len(fs) > top {
		fs = fs[:top]
	}
	return fs
}

func printFuncs(w io.Writer, args []string, top int, name string) error {
	ds, byDir, err := packageFuncs(args)
	if err != nil {
		return err
	}
	var all []Func
	for _, d := range ds {
		all = append(all, byDir[d]...)
	}
	fmt.Fprintf(w, "%5s %5s  %s\n", "cyclo", "lines", "function")
	for _, f := range mostComplex(all, top, name) {
		fmt.Fprintf(w, "%5d %5d  %s %s\n", f.Cyclo, f.Lines, f.Name, f.Pos)
	}
	return nil
}

// printFuncsEach prints the each most complex functions of every package
// folder, a block per folder.
func printFuncsEach(w io.Writer, args []string, each int, name string) error {
	ds, byDir, err := packageFuncs(args)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%5s %5s  %s\n", "cyclo", "lines", "function (the most complex of each package)")
	for _, d := range ds {
		fs := mostComplex(byDir[d], each, name)
		if len(fs) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s\n", filepath.Clean(d))
		for _, f := range fs {
			fmt.Fprintf(w, "%5d %5d    %s %s\n", f.Cyclo, f.Lines, f.Name, filepath.Base(f.Pos))
		}
	}
	return nil
}

// Graph is which files of one package use what others declare: Edges[a][b]
// is how many identifiers of file a refer to objects declared in file b.
type Graph struct {
	Files []string
	Edges map[string]map[string]int
}

// fileGraph type-checks the package in dir (its non-test files) and
// records, for every identifier that refers to an object of the package
// declared in another file, an edge between the two files.
func fileGraph(dir string) (Graph, error) {
	paths, err := goFiles(dir, false)
	if err != nil {
		return Graph{}, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	g := Graph{Edges: map[string]map[string]int{}}
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return Graph{}, err
		}
		files = append(files, f)
		g.Files = append(g.Files, filepath.Base(p))
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	pkg, err := conf.Check(dir, fset, files, info)
	if err != nil {
		return Graph{}, err
	}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from == to {
			continue
		}
		if g.Edges[from] == nil {
			g.Edges[from] = map[string]int{}
		}
		g.Edges[from][to]++
	}
	return g, nil
}

// cyclic returns the set of files on a cycle of g: those in a strongly
// connected component of more than one file (Tarjan's algorithm).
func cyclic(g Graph) map[string]int {
	index, low, comp := map[string]int{}, map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	next, ncomp := 0, 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range sortedKeys(g.Edges[v]) {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var members []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			members = append(members, w)
			if w == v {
				break
			}
		}
		ncomp++
		if len(members) > 1 {
			for _, m := range members {
				comp[m] = ncomp
			}
		}
	}
	for _, f := range g.Files {
		if _, seen := index[f]; !seen {
			visit(f)
		}
	}
	return comp
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func printFiles(w io.Writer, dir string) error {
	g, err := fileGraph(dir)
	if err != nil {
		return err
	}
	comp := cyclic(g)
	edges, onCycle, mutual := 0, 0, 0
	for _, from := range g.Files {
		tos := sortedKeys(g.Edges[from])
		if len(tos) == 0 {
			fmt.Fprintf(w, "%s → (nothing)\n", from)
			continue
		}
		var parts []string
		for _, to := range tos {
			edges++
			mark := ""
			if c, ok := comp[from]; ok && comp[to] == c {
				onCycle++
				mark = "*"
			}
			if g.Edges[to][from] > 0 {
				mutual++
			}
			parts = append(parts, fmt.Sprintf("%s%s(%d)", to, mark, g.Edges[from][to]))
		}
		fmt.Fprintf(w, "%s → %s\n", from, strings.Join(parts, " "))
	}
	groups := map[int][]string{}
	for f, c := range comp {
		groups[c] = append(groups[c], f)
	}
	up, order := layering(g)
	fmt.Fprintf(w, "%d files, %d edges between files; %d edges (*) lie on a cycle, in %d groups of files that use each other; %d edges have one back\n",
		len(g.Files), edges, onCycle, len(groups), mutual)
	fmt.Fprintf(w, "%d edges run back up in the best layering (files from the bottom: %s)\n", up, strings.Join(order, " "))
	pos := map[string]int{}
	for i, f := range order {
		pos[f] = i
	}
	for _, from := range g.Files {
		for _, to := range sortedKeys(g.Edges[from]) {
			if pos[to] > pos[from] {
				fmt.Fprintf(w, "  up: %s → %s (%d)\n", from, to, g.Edges[from][to])
			}
		}
	}
	for _, c := range slices.Sorted(func(yield func(int) bool) {
		for c := range groups {
			if !yield(c) {
				return
			}
		}
	}) {
		slices.Sort(groups[c])
		fmt.Fprintf(w, "  cycle group: %s\n", strings.Join(groups[c], " "))
	}
	return nil
}

// layering orders the files from the bottom layer up so that as few edges
// as possible run back up (a file using one above it), and returns that
// least number with the order. Only edges inside a group of files that use
// each other (a strongly connected component) ever need to run up, so the
// groups are placed in dependency order and each is ordered on its own:
// exactly (a dynamic programme over the sets of its files placed) for up
// to 26 files, greedily beyond.
func layering(g Graph) (int, []string) {
	comp := cyclic(g)
	groups := map[int][]string{}
	for _, f := range g.Files {
		if c, ok := comp[f]; ok {
			groups[c] = append(groups[c], f)
		}
	}
	// Place units (a lone file, or a group) leaves first: a unit goes once
	// every unit it uses is placed.
	unitOf := func(f string) string {
		if c, ok := comp[f]; ok {
			return fmt.Sprintf("group %d", c)
		}
		return f
	}
	members := map[string][]string{}
	for _, f := range g.Files {
		members[unitOf(f)] = append(members[unitOf(f)], f)
	}
	placed := map[string]bool{}
	var order []string
	total := 0
	for len(placed) < len(members) {
		var ready []string
		for u, fs := range members {
			if placed[u] {
				continue
			}
			ok := true
			for _, f := range fs {
				for to := range g.Edges[f] {
					if v := unitOf(to); v != u && !placed[v] {
						ok = false
					}
				}
			}
			if ok {
				ready = append(ready, u)
			}
		}
		slices.Sort(ready)
		for _, u := range ready {
			placed[u] = true
			up, o := orderGroup(g, members[u])
			total += up
			order = append(order, o...)
		}
	}
	return total, order
}

// orderGroup orders the files of one group from the bottom up with the
// fewest edges between them running up.
func orderGroup(g Graph, files []string) (int, []string) {
	n := len(files)
	idx := map[string]int{}
	for i, f := range files {
		idx[f] = i
	}
	// users[v] is the set of the group's files that use v.
	users := make([]uint64, n)
	for _, from := range files {
		for to := range g.Edges[from] {
			if v, ok := idx[to]; ok {
				users[v] |= 1 << idx[from]
			}
		}
	}
	if n > 26 {
		return greedyLayering(files, users)
	}
	cost := make([]uint8, 1<<n)
	pick := make([]int8, 1<<n)
	for m := 1; m < 1<<n; m++ {
		best := 1 << 30
		for v := range n {
			if m&(1<<v) == 0 {
				continue
			}
			prev := m &^ (1 << v)
			// v on top of prev: every file in prev that uses v points up.
			if c := int(cost[prev]) + bits(users[v]&uint64(prev)); c < best {
				best, pick[m] = c, int8(v)
			}
		}
		cost[m] = uint8(min(best, 255))
	}
	order := make([]string, 0, n)
	for m := 1<<n - 1; m != 0; m &^= 1 << pick[m] {
		order = append(order, files[pick[m]])
	}
	slices.Reverse(order)
	return int(cost[1<<n-1]), order
}

// greedyLayering places, from the bottom, the file whose placement makes
// fewest edges point up, for groups too large for the exact order.
func greedyLayering(files []string, users []uint64) (int, []string) {
	var placed uint64
	total := 0
	var order []string
	for range files {
		best, bestCost := -1, 1<<30
		for v := range files {
			if placed&(1<<v) != 0 {
				continue
			}
			if c := bits(users[v] & placed); c < bestCost {
				best, bestCost = v, c
			}
		}
		placed |= 1 << best
		total += bestCost
		order = append(order, files[best])
	}
	return total, order
}

func bits(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// countLines counts a file's lines as wc -l does.
func countLines(p string) (int, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	n := bytes.Count(data, []byte{'\n'})
	return n, nil
}

func printLines(w io.Writer, args []string) error {
	ds, err := dirs(args)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	fmt.Fprintf(bw, "%7s %7s  %s\n", "code", "tests", "package folder")
	var code, tests int
	for _, d := range ds {
		var n [2]int
		for i, t := range []bool{false, true} {
			files, err := goFiles(d, t)
			if err != nil {
				return err
			}
			for _, p := range files {
				c, err := countLines(p)
				if err != nil {
					return err
				}
				n[i] += c
			}
		}
		if n[0]+n[1] == 0 {
			continue
		}
		code += n[0]
		tests += n[1]
		fmt.Fprintf(bw, "%7d %7d  %s\n", n[0], n[1], d)
	}
	fmt.Fprintf(bw, "%7d %7d  total\n", code, tests)
	return nil
}
