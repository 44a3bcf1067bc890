// Command codestats prints the figures the design keeps an eye on, read
// from the Go source with go/ast and go/types (doc/design.md, "Measuring
// the code"):
//
//	go run ./scripts/codestats funcs [-top N] [-each N] [-name NAME] DIR...
//	    each function's lines and cyclomatic complexity, most complex first
//	    (-each N: the N most complex of each package folder)
//	go run ./scripts/codestats files DIR
//	    which non-test files of one package use what other files declare,
//	    and how many of those uses lie on a cycle between files
//	go run ./scripts/codestats lines DIR...
//	    the lines of each package's non-test and test files
//
// A DIR ending in "/..." means the folder and every folder below it.
// Cyclomatic complexity is counted as gocyclo does: 1, plus one for each
// if, for, range, non-default case and select case, && and ||.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = "usage: codestats funcs [-top N] [-each N] [-name NAME] DIR... | files DIR | lines DIR..."

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet("codestats "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	top := fs.Int("top", 0, "print only the N most complex functions (0: all)")
	each := fs.Int("each", 0, "print only the N most complex functions of each package folder (0: no grouping)")
	name := fs.String("name", "", "print only the functions of this name (Func or Type.Method)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	var err error
	switch args[0] {
	case "funcs":
		if *each > 0 {
			err = printFuncsEach(stdout, fs.Args(), *each, *name)
		} else {
			err = printFuncs(stdout, fs.Args(), *top, *name)
		}
	case "files":
		if fs.NArg() != 1 {
			fmt.Fprintln(stderr, usage)
			return 2
		}
		err = printFiles(stdout, fs.Arg(0))
	case "lines":
		err = printLines(stdout, fs.Args())
	default:
		fmt.Fprintln(stderr, usage)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "codestats:", err)
		return 1
	}
	return 0
}
