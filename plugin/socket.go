package plugin

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/neovim/go-client/nvim"
)

// Messages of the socket rules (the reference program's wording).
const (
	msgSocketPath    = "--nvim must be an absolute, non-symlink Unix socket"
	msgSocketOwner   = "Neovim socket must be owned by the current user"
	msgSocketPrivate = "Neovim socket must be private (0700 parent or 0600 socket)"
)

// ValidateSocket applies the rules of doc/design.md §11.3 to a --nvim value: an
// absolute path (so TCP addresses such as 127.0.0.1:6666 and relative
// names are refused) to a Unix socket, not a symlink, owned by the current
// user, and private: the socket has no group or other permission bits, or
// its parent directory is owned by the user and has none.
func ValidateSocket(path string) error {
	if path == "" || !filepath.IsAbs(path) || strings.Contains(path, "://") {
		return errors.New(msgSocketPath)
	}
	st, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("neovim socket %s: %w", path, err)
	}
	if st.Mode()&os.ModeSocket == 0 {
		return errors.New(msgSocketPath)
	}
	uid := uint32(os.Getuid())
	if owner(st) != uid {
		return errors.New(msgSocketOwner)
	}
	if st.Mode().Perm()&0o077 == 0 {
		return nil
	}
	dir, err := os.Lstat(filepath.Dir(path))
	if err != nil || !dir.IsDir() || owner(dir) != uid || dir.Mode().Perm()&0o077 != 0 {
		return errors.New(msgSocketPrivate)
	}
	return nil
}

// owner returns a file's owner uid (an impossible uid when unknown).
func owner(st os.FileInfo) uint32 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return s.Uid
	}
	return ^uint32(0)
}

// DialSocket validates path with [ValidateSocket], connects to the Neovim
// listening there and makes a first request (nvim_get_api_info); the
// connection and that request together are bounded by timeout, so a socket
// that accepts but never answers fails in time. The caller closes the
// returned client.
func DialSocket(path string, timeout time.Duration) (*nvim.Nvim, error) {
	if err := ValidateSocket(path); err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	deadline := time.Now().Add(timeout)
	conn, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		return nil, fmt.Errorf("connect to Neovim socket %s: %w", path, err)
	}
	v, err := nvim.New(conn, conn, conn, func(string, ...any) {})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("connect to Neovim socket %s: %w", path, err)
	}
	go v.Serve()
	done := make(chan error, 1)
	go func() {
		var info any
		done <- v.Request("nvim_get_api_info", &info)
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			v.Close()
			return nil, fmt.Errorf("neovim socket %s: first request failed: %w", path, err)
		}
		return v, nil
	case <-timer.C:
		v.Close()
		return nil, fmt.Errorf("neovim socket %s: Neovim request timed out after %s", path, timeout)
	}
}
