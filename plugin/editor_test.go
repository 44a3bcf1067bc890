package plugin_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neovim/go-client/nvim"

	"flow/bufferfs"
	"flow/internal/test/nvimtest"
	"flow/plugin"
)

// bufferfs.Editor against a real Neovim through plugin.Bridge, over both
// attachments: the embedded channel (as `flow nvim` has it) and a --listen
// socket (as `flow serve --nvim` has it).
func TestEditorThroughNeovim(t *testing.T) {
	attachments := map[string]func(t *testing.T, root string) *nvim.Nvim{
		"embed": func(t *testing.T, root string) *nvim.Nvim {
			return editor(t, root, true)
		},
		"socket": func(t *testing.T, root string) *nvim.Nvim {
			sock := filepath.Join(privateDir(t), "nvim.sock")
			nvimtest.Listen(t, sock, nvimtest.Options{Dir: root})
			v, err := plugin.DialSocket(sock, 10*time.Second)
			if err != nil {
				t.Fatalf("DialSocket(%s) = %v", sock, err)
			}
			t.Cleanup(func() { v.Close() })
			lua(t, v, "require('flow.tools').setup({workspace = ..., trusted = true})", root)
			return v
		},
	}
	for name, attach := range attachments {
		t.Run(name, func(t *testing.T) {
			root := workspace(t, map[string]string{"open.txt": "one\ntwo\n", "dirty.txt": "disk\n", "plain.txt": "p1\n"})
			v := attach(t, root)
			lua(t, v, "vim.cmd('edit dirty.txt'); vim.api.nvim_buf_set_lines(0, 0, -1, false, {'unsaved'}); vim.cmd('edit open.txt')")
			d, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Trusted: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			ed := bufferfs.NewEditor(d, newBridge(t, v, root, "", 10*time.Second))
			ctx := t.Context()

			f, err := ed.Read(ctx, "dirty.txt", 0)
			if err != nil || string(f.Data) != "unsaved\n" {
				t.Errorf("Read(dirty.txt) = %q, %v, want the unsaved buffer text", f.Data, err)
			}
			_, err = ed.Write(ctx, "dirty.txt", []byte("flow\n"), bufferfs.WriteOptions{})
			if !errors.Is(err, bufferfs.ErrDirtyBuffer) || !strings.Contains(err.Error(), "unsaved changes in Neovim (buffer 1)") {
				t.Errorf("Write(dirty.txt) = %v, want ErrDirtyBuffer naming buffer 1", err)
			}
			if got := readFile(t, root, "dirty.txt"); got != "disk\n" {
				t.Errorf("dirty.txt on disk = %q, want unchanged", got)
			}
			if got := bufLines(t, v, "dirty.txt"); !slices.Equal(got, []any{"unsaved"}) {
				t.Errorf("dirty.txt buffer = %v, want unchanged", got)
			}

			if _, err := ed.Read(ctx, "open.txt", 0); err != nil {
				t.Fatal(err)
			}
			info, err := ed.Write(ctx, "open.txt", []byte("ONE\n"), bufferfs.WriteOptions{})
			if err != nil || info.SHA256 != hash("ONE\n") {
				t.Fatalf("Write(open.txt) = %+v, %v", info, err)
			}
			if got := bufLines(t, v, "open.txt"); !slices.Equal(got, []any{"ONE"}) {
				t.Errorf("open.txt buffer = %v, want the new text", got)
			}
			if got := lua(t, v, "return vim.bo.modified"); got != false {
				t.Errorf("open.txt modified = %v, want false", got)
			}
			lua(t, v, "vim.cmd('silent normal! u')")
			if got := bufLines(t, v, "open.txt"); !slices.Equal(got, []any{"one", "two"}) {
				t.Errorf("open.txt after u = %v, want the old text", got)
			}

			if _, err := ed.Write(ctx, "new/dir/file.txt", []byte("created\n"), bufferfs.WriteOptions{}); err != nil {
				t.Errorf("Write(new/dir/file.txt) = %v", err)
			} else if got := readFile(t, root, "new/dir/file.txt"); got != "created\n" {
				t.Errorf("new file = %q", got)
			}

			// Changed on disk after flow read it: a conflict.
			if _, err := ed.Read(ctx, "plain.txt", 0); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "plain.txt"), []byte("theirs\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ed.Write(ctx, "plain.txt", []byte("ours\n"), bufferfs.WriteOptions{}); !errors.Is(err, bufferfs.ErrConflict) {
				t.Errorf("Write(plain.txt) after an external change = %v, want ErrConflict", err)
			}
			if got := readFile(t, root, "plain.txt"); got != "theirs\n" {
				t.Errorf("plain.txt = %q, want the external change", got)
			}

			if err := ed.Remove(ctx, "open.txt"); !errors.Is(err, bufferfs.ErrConflict) {
				t.Errorf("Remove(open.txt) while loaded = %v, want ErrConflict", err)
			}
			if err := ed.Remove(ctx, "plain.txt"); err != nil {
				t.Errorf("Remove(plain.txt) = %v", err)
			}
		})
	}
}

// privateDir returns a new directory with mode 0700 (t.TempDir's mode
// depends on the Go version).
func privateDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestValidateSocket(t *testing.T) {
	private := privateDir(t)
	public := filepath.Join(t.TempDir(), "pub")
	if err := os.Mkdir(public, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(public, 0o755); err != nil {
		t.Fatal(err)
	}
	listen := func(dir string, mode os.FileMode) string {
		p := filepath.Join(dir, "s.sock")
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	okPrivateDir := listen(private, 0o666)
	publicSock := listen(public, 0o666)
	link := filepath.Join(private, "link.sock")
	if err := os.Symlink(okPrivateDir, link); err != nil {
		t.Fatal(err)
	}
	plainFile := filepath.Join(private, "file")
	if err := os.WriteFile(plainFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want string // "" = accepted
	}{
		{okPrivateDir, ""},
		{publicSock, "private"},
		{"127.0.0.1:6666", "absolute"},
		{"http://127.0.0.1:6666", "absolute"},
		{"relative.sock", "absolute"},
		{"", "absolute"},
		{link, "non-symlink"},
		{plainFile, "Unix socket"},
		{filepath.Join(private, "missing.sock"), "no such file"},
	}
	for _, tc := range tests {
		err := plugin.ValidateSocket(tc.path)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("ValidateSocket(%q) = %v, want %q", tc.path, err, tc.want)
		}
	}
	// A socket with no group/other bits is private in any directory.
	if err := os.Chmod(publicSock, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := plugin.ValidateSocket(publicSock); err != nil {
		t.Errorf("ValidateSocket(0600 socket in 0755 dir) = %v, want accepted", err)
	}
	if _, err := plugin.DialSocket("127.0.0.1:6666", time.Second); err == nil {
		t.Error("DialSocket(TCP address) succeeded")
	}
}

// A socket that accepts but never answers fails within the timeout.
func TestDialSocketSilentPeer(t *testing.T) {
	p := filepath.Join(privateDir(t), "silent.sock")
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, never answer
		}
	}()
	start := time.Now()
	v, err := plugin.DialSocket(p, 500*time.Millisecond)
	if err == nil {
		v.Close()
		t.Fatal("DialSocket(silent peer) succeeded")
	}
	if !strings.Contains(err.Error(), "timed out") {
		t.Errorf("DialSocket(silent peer) = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("DialSocket(silent peer) took %s, want about the 0.5s timeout", d)
	}
}
