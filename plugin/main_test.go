package plugin_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// hostBin is the test host (internal/test/testhost), built once per test
// binary into a temporary directory that TestMain removes.
var (
	hostOnce sync.Once
	hostDir  string
	hostBin  string
	hostErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if hostDir != "" {
		os.RemoveAll(hostDir)
	}
	os.Exit(code)
}

// testHost returns the path of the built test host.
func testHost(t *testing.T) string {
	t.Helper()
	hostOnce.Do(func() {
		hostDir, hostErr = os.MkdirTemp("", "flow-testhost-")
		if hostErr != nil {
			return
		}
		hostBin = filepath.Join(hostDir, "flow")
		cmd := exec.Command("go", "build", "-o", hostBin, "flow/internal/test/testhost")
		out, err := cmd.CombinedOutput()
		if err != nil {
			hostErr = fmt.Errorf("go build flow/internal/test/testhost: %v\n%s", err, out)
		}
	})
	if hostErr != nil {
		t.Fatal(hostErr)
	}
	return hostBin
}
