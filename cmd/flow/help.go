package main

import (
	_ "embed"
	"fmt"
)

//go:embed usage.txt
var usageText string

func cmdHelp(e *env) int {
	fmt.Fprint(e.stdout, usageText)
	return exitOK
}
