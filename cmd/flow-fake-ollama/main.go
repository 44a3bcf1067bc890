// Command flow-fake-ollama serves a scripted fake Ollama (package
// flow/internal/test/ollamatest) for black-box tests and the demo:
//
//	flow-fake-ollama -script FILE [-addr 127.0.0.1:0] [-record FILE] [-exit-when-done]
//
// The first line on stdout is "listening on http://HOST:PORT". With -record,
// every request is appended to FILE as one JSON line {"method","path","body"}.
// The server stops on SIGINT or SIGTERM, or, with -exit-when-done, once the
// last scripted turn has been answered. The script format is documented in
// the ollamatest package.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"flow/internal/test/ollamatest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole program behind main: 0 after a clean stop, 1 when the
// server cannot run, 2 on bad flags or a bad script.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flow-fake-ollama", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scriptPath := fs.String("script", "", "JSON script `file` (required)")
	addr := fs.String("addr", "127.0.0.1:0", "listen `address`")
	recordPath := fs.String("record", "", "append every request to `file` as NDJSON")
	exitWhenDone := fs.Bool("exit-when-done", false, "exit once every scripted turn has been answered")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *scriptPath == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: flow-fake-ollama -script FILE [-addr 127.0.0.1:0] [-record FILE] [-exit-when-done]")
		return 2
	}
	data, err := os.ReadFile(*scriptPath)
	if err != nil {
		fmt.Fprintf(stderr, "flow-fake-ollama: %v\n", err)
		return 2
	}
	srv := ollamatest.NewServer()
	if err := srv.LoadScript(data); err != nil {
		fmt.Fprintf(stderr, "flow-fake-ollama: %s: %v\n", *scriptPath, err)
		return 2
	}
	srv.Addr = *addr
	if *recordPath != "" {
		f, err := os.OpenFile(*recordPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "flow-fake-ollama: %v\n", err)
			return 1
		}
		defer f.Close()
		srv.OnRequest = recorder(f, stderr)
	}
	if err := srv.Start(); err != nil {
		fmt.Fprintf(stderr, "flow-fake-ollama: %v\n", err)
		return 1
	}
	defer srv.Close()
	fmt.Fprintf(stdout, "listening on %s\n", srv.URL)

	drained := srv.Drained()
	if !*exitWhenDone {
		drained = nil
	}
	select {
	case <-ctx.Done():
	case <-drained:
	}
	return 0
}

// recorder returns a hook that appends each request to w as one JSON line.
func recorder(w io.Writer, stderr io.Writer) func(ollamatest.Recorded) {
	var mu sync.Mutex
	return func(r ollamatest.Recorded) {
		b, err := json.Marshal(r)
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			_, err = w.Write(append(b, '\n'))
		}
		if err != nil {
			fmt.Fprintf(stderr, "flow-fake-ollama: record %s %s: %v\n", r.Method, r.Path, err)
		}
	}
}
