package agent

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"flow/runtime/model"
	"flow/runtime/tools"
)

var errBoom = errors.New("connection refused by fake")

func writeFile(t testing.TB, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileExists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

type toolsResult = tools.Result

func newRegistry(h *harness) *tools.Registry {
	return tools.New(h.disk, tools.Options{Trusted: h.cfg.Trusted, Checks: h.runner})
}

type modelCall = model.ToolCall
