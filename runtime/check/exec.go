package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"flow/runtime/report"
)

// Process-control timings.
const (
	// killGrace is how long a check's process group has between SIGTERM and
	// SIGKILL after a timeout or cancellation (doc/design.md §9).
	killGrace = 1 * time.Second
	// reapGrace bounds the wait for the direct child to die after SIGKILL
	// (it cannot die while stuck in uninterruptible sleep).
	reapGrace = 5 * time.Second
)

// drainGrace bounds how long output is read after the check's processes
// were killed. Every process the check started is dead by then, so the
// pipes reach EOF at once; only a process that got a pipe some other way
// (passed over a socket to an unrelated process) can still hold one open,
// and flow does not wait for it. A variable so tests can prove that no
// check waits for it.
var drainGrace = 1 * time.Second

// outcome is the result of executing one check's argv.
type outcome struct {
	status     string // a report.Status* check-result status
	returncode *int   // for "ok" and "failed" only
	err        string // for every other status
	stdout     *tail
	stderr     *tail
}

// execute runs argv in root with env (nil inherits flow's environment) and
// returns how it ended. It never runs a shell. The child gets /dev/null as
// stdin, its own process group, and SIGKILL when flow dies. Its output goes
// through pipes into tails.
//
// On timeout or cancellation the group gets SIGTERM, then SIGKILL after
// killGrace. Whatever the ending, as soon as the direct child has exited the
// whole group is SIGKILLed, and so is every other process the check started
// that is still alive, including those that left its process group or
// session (flow is a child subreaper, see [BecomeSubreaper], so they are its
// children now); those are reaped. Where cgroup v2 is writable the child is
// started in a cgroup of its own, and cgroup.kill empties it first. Output is
// then drained for at most drainGrace.
//
// The direct child is only reaped after all that: until then it stays a
// zombie, so its pid, which is the group id, cannot be reused and the group
// kill cannot hit an unrelated process.
func execute(ctx context.Context, root string, argv, env []string, timeout time.Duration) outcome {
	out := outcome{stdout: newTail(OutputTail), stderr: newTail(OutputTail)}
	root, path, status, msg := resolveCommand(root, argv)
	if status != "" {
		return out.fail(status, msg)
	}
	p, err := newPipes()
	if err != nil {
		return out.fail(report.StatusError, err.Error())
	}
	cmd, cg, startErr := startCheck(path, argv, root, env, p)
	// The child has its own copies of the write ends (or never started);
	// closing ours lets the readers see EOF once the group is gone.
	p.outW.Close()
	p.errW.Close()
	if startErr != nil {
		p.outR.Close()
		p.errR.Close()
		return out.fail(startStatus(startErr), startErr.Error())
	}
	pid := cmd.Process.Pid

	var readers sync.WaitGroup
	readers.Go(func() { readAll(p.outR, out.stdout) })
	readers.Go(func() { readAll(p.errR, out.stderr) })

	exited := make(chan error, 1)
	go func() { exited <- waitExited(pid) }()

	out.status, out.err = awaitExit(ctx, timeout, exited)
	if out.status != "" && !terminate(pid, exited) {
		// The child survived SIGKILL (uninterruptible sleep).
		abandon(cmd, cg, exited, &readers, p)
		out.status, out.err = report.StatusError, fmt.Sprintf("check process %d did not exit after SIGKILL", pid)
		return out
	}
	waitErr := killAndReap(cmd, cg)
	stopReading(&readers, p.outR, p.errR, drainGrace)
	if out.status != "" {
		return out // timeout or cancelled: the exit status is not the check's verdict
	}
	return out.verdict(cmd.ProcessState, waitErr)
}

// resolveCommand checks the workspace root and finds the check's
// executable: the absolute root and the executable's path, or the status
// and message of the check that cannot start.
func resolveCommand(root string, argv []string) (absRoot, path, status, msg string) {
	if len(argv) == 0 {
		return "", "", report.StatusError, "check has an empty command"
	}
	if root == "" {
		return "", "", report.StatusError, "check runner has no workspace root"
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return "", "", report.StatusError, err.Error()
	}
	if fi, err := os.Stat(root); err != nil {
		return "", "", report.StatusUnavailable, err.Error()
	} else if !fi.IsDir() {
		return "", "", report.StatusUnavailable, fmt.Sprintf("workspace root %s is not a directory", root)
	}
	path, err = lookExecutable(root, argv[0])
	if err != nil {
		return "", "", report.StatusUnavailable, err.Error()
	}
	return root, path, "", ""
}

// checkPipes are the check's stdout and stderr pipes.
type checkPipes struct{ outR, outW, errR, errW *os.File }

func newPipes() (*checkPipes, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create stdout pipe: %v", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("create stderr pipe: %v", err)
	}
	return &checkPipes{outR: outR, outW: outW, errR: errR, errW: errW}, nil
}

// startCheck starts the check in a process group of its own and, where
// cgroup v2 allows it, in a cgroup of its own; when the cgroup is refused
// it starts the check without one.
func startCheck(path string, argv []string, root string, env []string, p *checkPipes) (*exec.Cmd, *checkCgroup, error) {
	newCmd := func() *exec.Cmd {
		return &exec.Cmd{
			Path: path,
			Args: append([]string(nil), argv...),
			Dir:  root,
			Env:  env,
			// Stdin nil: os/exec connects the null device.
			Stdout: p.outW,
			Stderr: p.errW,
			SysProcAttr: &syscall.SysProcAttr{
				Setpgid: true, // own group, pgid = pid
				// Pdeathsig fires when the OS thread that started the
				// child exits; the Go runtime keeps its threads unless a
				// locked goroutine exits, so in practice this is flow's
				// death.
				Pdeathsig: syscall.SIGKILL,
			},
		}
	}
	// Without the subreaper, processes that leave the check's group are
	// reparented to init and cannot be found; the check still runs.
	_ = BecomeSubreaper()
	cmd := newCmd()
	cg := newCheckCgroup()
	if cg != nil {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, cg.fd
	}
	err := startRegistered(cmd.Start, func() int { return cmd.Process.Pid })
	if err != nil && cg != nil {
		// The cgroup may be refused (no clone3, no permission to move a
		// process there): run the check without it.
		cg.remove()
		cg = nil
		cmd = newCmd()
		err = startRegistered(cmd.Start, func() int { return cmd.Process.Pid })
	}
	return cmd, cg, err
}

// awaitExit waits for the direct child's exit, the timeout or the
// context: "" when the child exited, else the status and message of the
// check that was stopped.
func awaitExit(ctx context.Context, timeout time.Duration, exited <-chan error) (status, msg string) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-exited:
		return "", ""
	case <-timer.C:
		return report.StatusTimeout, fmt.Sprintf("Check exceeded %dms", timeout.Milliseconds())
	case <-ctx.Done():
		return report.StatusCancelled, "check cancelled"
	}
}

// abandon gives up on a child that survived SIGKILL: what else the check
// started is killed now, the child is reaped whenever it dies, and the
// output is no longer read.
func abandon(cmd *exec.Cmd, cg *checkCgroup, exited <-chan error, readers *sync.WaitGroup, p *checkPipes) {
	pid := cmd.Process.Pid
	cg.kill()
	killLeftovers(pid, cg.pathOf())
	go func() {
		<-exited
		_ = cmd.Wait()
		unregister(pid)
		cg.remove()
	}()
	stopReading(readers, p.outR, p.errR, 0)
}

// killAndReap kills the check's group and everything else it started, then
// reaps the direct child and returns its wait error. Processes that left
// the group (setsid, setpgid) and every child they left to flow are killed
// and reaped, so none keeps the pipes open; the check's cgroup, when it has
// one, goes first: it also holds what joined flow's own process group.
func killAndReap(cmd *exec.Cmd, cg *checkCgroup) error {
	pid := cmd.Process.Pid
	killGroup(pid)
	cg.kill()
	killLeftovers(pid, cg.pathOf())
	err := cmd.Wait() // reaps the zombie
	unregister(pid)
	cg.remove()
	return err
}

// verdict is the outcome of a check whose child exited: its exit code
// decides ok or failed.
func (o outcome) verdict(st *os.ProcessState, waitErr error) outcome {
	if st == nil {
		return o.fail(report.StatusError, fmt.Sprintf("wait for check: %v", waitErr))
	}
	code, ok := exitCode(st)
	if !ok {
		return o.fail(report.StatusError, fmt.Sprintf("check ended without an exit status: %v", st))
	}
	o.returncode = &code
	o.status = report.StatusFailed
	if code == 0 {
		o.status = report.StatusOK
	}
	return o
}

// fail sets status and message and returns o.
func (o outcome) fail(status, msg string) outcome {
	o.status, o.err = status, msg
	return o
}

// lookExecutable resolves argv[0] with exec.LookPath semantics: a name with a
// slash is a path, relative to the workspace root; a bare name is searched in
// flow's PATH (which is also where an `env` allowlist without PATH still
// finds it). Like exec.LookPath, a PATH entry relative to flow's working
// directory is refused rather than trusted.
func lookExecutable(root, name string) (string, error) {
	if strings.Contains(name, "/") && !filepath.IsAbs(name) {
		name = filepath.Join(root, name)
	}
	return exec.LookPath(name)
}

// startStatus classifies an error from starting the child: a missing or
// non-executable file (or missing directory) makes the check unavailable,
// anything else is an error.
func startStatus(err error) string {
	switch {
	case errors.Is(err, exec.ErrNotFound),
		errors.Is(err, exec.ErrDot),
		errors.Is(err, fs.ErrNotExist),
		errors.Is(err, fs.ErrPermission),
		errors.Is(err, syscall.ENOTDIR),
		errors.Is(err, syscall.EISDIR):
		return report.StatusUnavailable
	}
	return report.StatusError
}

// exitCode returns the check's return code: the exit status, or minus the
// signal number when a signal killed it (as Python's subprocess reports it).
func exitCode(st *os.ProcessState) (int, bool) {
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok {
		return 0, false
	}
	switch {
	case ws.Exited():
		return ws.ExitStatus(), true
	case ws.Signaled():
		return -int(ws.Signal()), true
	}
	return 0, false
}

// readAll copies r into t until EOF or an error (including the read deadline
// set by stopReading). The tail bounds memory; the pipe keeps the child from
// ever blocking on a full pipe while this runs.
func readAll(r io.Reader, t *tail) {
	buf := make([]byte, 32*1024)
	for {
		n, err := r.Read(buf)
		t.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

// stopReading waits for the readers to reach EOF for at most grace, then
// makes any still-blocked read fail, waits for the readers and closes the
// read ends. Data already in a pipe is still read: a deadline only fails a
// read that would block.
func stopReading(readers *sync.WaitGroup, outR, errR *os.File, grace time.Duration) {
	deadline := time.Now().Add(grace)
	pollable := outR.SetReadDeadline(deadline) == nil
	pollable = errR.SetReadDeadline(deadline) == nil && pollable
	if !pollable {
		// Pipes from os.Pipe are pollable on Linux; should one not be,
		// closing it is the remaining way to end a blocked read.
		stop := time.AfterFunc(grace, func() {
			outR.Close()
			errR.Close()
		})
		defer stop.Stop()
	}
	readers.Wait()
	outR.Close()
	errR.Close()
}

// waitExited blocks until process pid has exited, without reaping it
// (WNOWAIT), so that the pid and its process group id stay reserved until
// cmd.Wait.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

// terminate sends SIGTERM to the process group of pid, and SIGKILL when the
// direct child has not exited after killGrace. It reports whether the child
// has exited (it waits at most reapGrace after SIGKILL).
func terminate(pid int, exited <-chan error) bool {
	signalGroup(pid, syscall.SIGTERM)
	grace := time.NewTimer(killGrace)
	defer grace.Stop()
	select {
	case <-exited:
		return true
	case <-grace.C:
	}
	killGroup(pid)
	reap := time.NewTimer(reapGrace)
	defer reap.Stop()
	select {
	case <-exited:
		return true
	case <-reap.C:
		return false
	}
}

// killGroup sends SIGKILL to the process group pgid; a group that no longer
// exists (ESRCH) is not an error.
func killGroup(pgid int) {
	signalGroup(pgid, syscall.SIGKILL)
}

// signalGroup sends sig to every process of group pgid, ignoring errors: the
// only expected one is ESRCH, when the whole group is already gone.
func signalGroup(pgid int, sig syscall.Signal) {
	if pgid <= 0 {
		return // never signal our own group (0) or every process (-1)
	}
	_ = syscall.Kill(-pgid, sig)
}
