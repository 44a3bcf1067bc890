// Package live runs flow's tests against a real Ollama server: the binary
// scripts/ollama-test.sh builds from the Go module proxy at a pinned
// version, serving the deterministic stand-in models the same script
// generates ([Models]) and creates. Where the scripted fake server
// (internal/test/ollamatest) replays what a test wrote, this one renders
// prompts with its own template and parses tool calls with its own parser,
// so a test sees what a real Ollama hands a client.
//
// A test calls [Start]; it skips when the server or its models have not
// been prepared, and fails instead when FLOW_TEST_OLLAMA=required (CI).
// Each server runs on a free loopback port with its own HOME and
// OLLAMA_NO_CLOUD=1, shares the prepared models read-only, and is stopped,
// with every runner process it started, when the test ends.
package live

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"flow/internal/text"
)

// Version is the Ollama release the tests run against.
const Version = "v0.17.4"

// EnvRequired names the variable that, set to "required", turns a missing
// server into a test failure.
const EnvRequired = "FLOW_TEST_OLLAMA"

// Dir returns the directory scripts/ollama-test.sh prepares:
// ${FLOW_TEST_CACHE:-$HOME/.cache/flow-test}/ollama/<Version>.
func Dir() string {
	base := os.Getenv("FLOW_TEST_CACHE")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		base = filepath.Join(home, ".cache", "flow-test")
	}
	return filepath.Join(base, "ollama", Version)
}

// BinaryPath returns the server binary's path: $FLOW_TEST_OLLAMA_BIN, or
// ollama in [Dir].
func BinaryPath() string {
	if p := os.Getenv("FLOW_TEST_OLLAMA_BIN"); p != "" {
		return p
	}
	return filepath.Join(Dir(), "ollama")
}

// ModelsDir returns the OLLAMA_MODELS directory of the prepared models:
// $FLOW_TEST_OLLAMA_MODELS, or models in [Dir].
func ModelsDir() string {
	if p := os.Getenv("FLOW_TEST_OLLAMA_MODELS"); p != "" {
		return p
	}
	return filepath.Join(Dir(), "models")
}

// Server is a running Ollama server.
type Server struct {
	// URL is the server's origin, "http://127.0.0.1:PORT".
	URL string
	// Host is "127.0.0.1:PORT", the form OLLAMA_HOST takes.
	Host string

	home    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	stop    sync.Once
}

// Option adjusts the server's environment before it starts.
type Option func(env map[string]string)

// WithEnv sets one environment variable of the server, such as
// OLLAMA_CONTEXT_LENGTH.
func WithEnv(key, value string) Option {
	return func(env map[string]string) { env[key] = value }
}

// Start starts a server for the test and stops it when the test ends. The
// test is skipped (or, with FLOW_TEST_OLLAMA=required, failed) when the
// binary or a model of [Models] has not been prepared.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	bin := BinaryPath()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...) + "; run `scripts/ollama-test.sh prepare` (or `make ollama-test-server`) to build it"
		if os.Getenv(EnvRequired) == "required" {
			t.Fatalf("live: %s (%s=required)", msg, EnvRequired)
		}
		t.Skipf("live: %s", msg)
	}
	if st, err := os.Stat(bin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		missing("no Ollama server binary at %s", bin)
	}
	if _, err := os.Stat(filepath.Join(ModelsDir(), "manifests")); err != nil {
		missing("no test models in %s", ModelsDir())
	}

	s, err := start(t, bin, opts)
	if err != nil {
		t.Fatalf("live: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("live: stopping the server: %v", err)
		}
		if t.Failed() || os.Getenv("FLOW_TEST_OLLAMA_LOG") != "" {
			log, _ := text.LastLines(s.Log(), logLines())
			t.Logf("live: server log (%s):\n%s", s.logPath, log)
		}
	})

	have, err := s.modelNames()
	if err != nil {
		t.Fatalf("live: %v", err)
	}
	for _, m := range Models() {
		if !slices.Contains(have, m.Name+":latest") && !slices.Contains(have, m.Name) {
			missing("the test model %s is not in %s (have %v)", m.Name, ModelsDir(), have)
		}
	}
	return s
}

func start(t testing.TB, bin string, opts []Option) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	host := fmt.Sprintf("127.0.0.1:%d", port)
	home := t.TempDir()
	env := map[string]string{
		"HOME":            home, // the server writes its key to $HOME/.ollama
		"OLLAMA_HOST":     host,
		"OLLAMA_MODELS":   ModelsDir(),
		"OLLAMA_NO_CLOUD": "1",
		"OLLAMA_NOPRUNE":  "1", // the models directory is shared: never delete from it
	}
	for _, o := range opts {
		o(env)
	}
	cmd := exec.Command(bin, "serve")
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, set := env[k]; set || strings.HasPrefix(k, "OLLAMA_") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	logPath := filepath.Join(t.TempDir(), "ollama-serve.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	cmd.Stdout, cmd.Stderr = logf, logf
	// A process group of its own, so that Stop reaches the runners the
	// server starts; and killed with the test process if that dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	s := &Server{URL: "http://" + host, Host: host, home: home, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(); err != nil {
		s.Stop()
		log, _ := text.LastLines(s.Log(), 40)
		return nil, fmt.Errorf("%w\nserver log:\n%s", err, log)
	}
	return s, nil
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls /api/version until the server answers. The bound only
// keeps a broken binary from hanging the test run.
func (s *Server) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/api/version", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("ollama serve exited before answering: %v", s.waitErr)
		case <-ctx.Done():
			return errors.New("ollama serve did not answer /api/version within 2 minutes")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// modelNames lists the installed models through the CLI's own API.
func (s *Server) modelNames() ([]string, error) {
	out, err := s.Command("list").Output()
	if err != nil {
		return nil, fmt.Errorf("ollama list: %w", err)
	}
	var names []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 && f[0] != "NAME" {
			names = append(names, f[0])
		}
	}
	return names, nil
}

// Command returns an ollama CLI command talking to this server.
func (s *Server) Command(args ...string) *exec.Cmd {
	cmd := exec.Command(s.cmd.Path, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OLLAMA_") && !strings.HasPrefix(kv, "HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "OLLAMA_HOST="+s.Host, "HOME="+s.home)
	return cmd
}

// Log returns what the server has written to its log so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.logPath)
	return string(b)
}

// Stop stops the server and its runners: SIGTERM to the process group,
// then SIGKILL if it has not exited after 10 seconds. It is safe to call
// twice.
func (s *Server) Stop() error {
	var err error
	s.stop.Do(func() {
		pgid := s.cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-s.done
			err = errors.New("ollama serve ignored SIGTERM for 10 s and was killed")
		}
		// Runners left in the group (none, normally) go with it.
		syscall.Kill(-pgid, syscall.SIGKILL)
	})
	return err
}

// logLines is how much of the server log a failed test shows:
// FLOW_TEST_OLLAMA_LOG lines (and for a passing test too), else 60.
func logLines() int {
	if n, err := strconv.Atoi(os.Getenv("FLOW_TEST_OLLAMA_LOG")); err == nil && n > 0 {
		return n
	}
	return 60
}
