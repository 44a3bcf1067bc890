// Command flow runs a bounded planner → coder → reviewer workflow against a
// local model with host-enforced verification. See README.md and doc/design.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"flow/runtime/check"
)

func main() {
	// Before anything can start a process: processes that a check leaves
	// behind become flow's children, to be killed when the check ends.
	if err := check.BecomeSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "flow: cannot become a child subreaper (processes a check leaves behind may outlive it): %v\n", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
