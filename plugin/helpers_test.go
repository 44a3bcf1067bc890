package plugin_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/neovim/go-client/nvim"

	"flow/internal/test/nvimtest"
)

// workspace writes files into a new temporary directory and returns its
// real path.
func workspace(t testing.TB, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		abs := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// editor starts a headless Neovim in root with flow.tools set up for root
// (trusted as given).
func editor(t testing.TB, root string, trusted bool) *nvim.Nvim {
	t.Helper()
	v := nvimtest.New(t, nvimtest.Options{Dir: root})
	nvimtest.Exec(t, v, "require('flow.tools').setup({workspace = select(1, ...), trusted = select(2, ...)})", root, trusted)
	return v
}

// lua evaluates code in v and returns the result.
func lua(t testing.TB, v *nvim.Nvim, code string, args ...any) any {
	t.Helper()
	return nvimtest.Exec(t, v, code, args...)
}

// callTool calls flow.tools through the fixed string flow uses.
func callTool(t testing.TB, v *nvim.Nvim, name any, args any) map[string]any {
	t.Helper()
	out := lua(t, v, "return require('flow.tools').call(...)", name, args)
	res, ok := out.(map[string]any)
	if !ok {
		t.Fatalf("call(%v, %v) = %#v, want an object", name, args, out)
	}
	return res
}

// bufLines returns the lines of the buffer of path (relative to Neovim's
// cwd).
func bufLines(t *testing.T, v *nvim.Nvim, path string) []any {
	t.Helper()
	out := lua(t, v, "return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", path)
	list, _ := out.([]any)
	return list
}

func readFile(t *testing.T, root, p string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// asInt converts a decoded msgpack number.
func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case uint64:
		return int64(x)
	case float64:
		return int64(x)
	}
	return -1
}
