package plugin

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// TakeStdout reserves the process's standard output for the RPC channel of
// `flow nvim`: it returns a new descriptor for the real stdout, points fd 1
// at stderr (so nothing else, not even a child process or a stray print,
// can write to the channel) and sets os.Stdout to os.Stderr. Call it once,
// before anything else runs, and pass the result to [ServeHost].
func TakeStdout() (*os.File, error) {
	fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("duplicate stdout: %w", err)
	}
	if err := unix.Dup2(2, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("redirect stdout to stderr: %w", err)
	}
	os.Stdout = os.Stderr
	return os.NewFile(uintptr(fd), "rpc-stdout"), nil
}
