// Command flow-test-models writes the deterministic stand-in models of the
// real-Ollama tests as Hugging Face folders, one per model under -out, each
// with the Modelfile that `ollama create NAME -f DIR/NAME/Modelfile` reads.
// scripts/ollama-test.sh runs it; with -list it prints the model names.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"flow/internal/test/ollamatest/live"
)

func main() {
	out := flag.String("out", "", "directory to write the model folders in")
	list := flag.Bool("list", false, "print the model names, one a line, and write nothing")
	flag.Parse()
	if *list {
		for _, m := range live.Models() {
			fmt.Println(m.Name)
		}
		return
	}
	if *out == "" {
		fmt.Fprintln(os.Stderr, "flow-test-models: -out DIR is required")
		os.Exit(2)
	}
	dir, err := filepath.Abs(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flow-test-models:", err)
		os.Exit(1)
	}
	for _, m := range live.Models() {
		if err := live.WriteFolder(filepath.Join(dir, m.Name), m); err != nil {
			fmt.Fprintf(os.Stderr, "flow-test-models: %s: %v\n", m.Name, err)
			os.Exit(1)
		}
	}
}
