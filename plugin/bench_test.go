package plugin_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkBridgeFileRead measures one bridged file_read of a loaded
// 5,000-line buffer: the freshness gate (editor_context) and the read.
func BenchmarkBridgeFileRead(b *testing.B) {
	var text strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&text, "line %d: the quick brown fox\n", i)
	}
	root := workspace(b, map[string]string{"big.txt": text.String()})
	v := editor(b, root, false)
	lua(b, v, "vim.cmd('edit big.txt')")
	br := newBridge(b, v, root, "", 30*time.Second)
	args := map[string]any{"path": "big.txt"}
	b.ReportAllocs()
	for b.Loop() {
		res, err := br.Call(b.Context(), "file_read", args)
		if err != nil || res["status"] != "ok" {
			b.Fatalf("file_read = %v, %v", res["status"], err)
		}
	}
}

// BenchmarkEditorContext100Buffers measures editor_context with 100
// workspace buffers loaded (each snapshot entry hashes its file).
// nvim-cpu-ms and host-cpu-ms are the CPU time (user and system) Neovim
// and this process use per call, which a loaded machine disturbs less
// than ns/op.
func BenchmarkEditorContext100Buffers(b *testing.B) {
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("pkg%d/file%d.go", i%10, i)] = strings.Repeat(fmt.Sprintf("// file %d\n", i), 50)
	}
	root := workspace(b, files)
	v := editor(b, root, false)
	lua(b, v, `for _, p in ipairs(vim.fn.globpath('.', '**/*.go', false, true)) do
		local n = vim.fn.bufadd(p); vim.fn.bufload(n) end`)
	if n := asInt(lua(b, v, "return #vim.tbl_filter(vim.api.nvim_buf_is_loaded, vim.api.nvim_list_bufs())")); n < 100 {
		b.Fatalf("%d buffers loaded, want 100", n)
	}
	br := newBridge(b, v, root, "", 30*time.Second)
	b.ReportAllocs()
	nvimCPU := func() time.Duration {
		return time.Duration(asInt(lua(b, v, `local u = vim.loop.getrusage()
			return (u.utime.sec + u.stime.sec) * 1000000 + u.utime.usec + u.stime.usec`))) * time.Microsecond
	}
	nvimStart, hostStart := nvimCPU(), hostCPU(b)
	for b.Loop() {
		res, err := br.Call(b.Context(), "editor_context", nil)
		if err != nil || res["status"] != "ok" {
			b.Fatalf("editor_context = %v, %v", res["status"], err)
		}
	}
	n := float64(b.N)
	b.ReportMetric((nvimCPU()-nvimStart).Seconds()*1000/n, "nvim-cpu-ms")
	b.ReportMetric((hostCPU(b)-hostStart).Seconds()*1000/n, "host-cpu-ms")
}

// hostCPU returns the CPU time this process has used so far.
func hostCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
