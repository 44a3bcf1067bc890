package plugin_test

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"flow/internal/test/nvimtest"
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

// BenchmarkEditorWriteDiagnostics measures the coder's file_write of a
// source file inside Neovim, alternating a type error and its fix, without
// a language server and with gopls or pyright attached: with a server the
// write also waits (at most 1.5 s) for the server's new diagnostics of the
// buffer, which its result then carries. median-ms and max-ms are whole
// writes; wait-median-ms and wait-max-ms the editor's own count of that
// wait (waited_ms). The difference between a server's median and none's is
// what the diagnostics add per edit.
func BenchmarkEditorWriteDiagnostics(b *testing.B) {
	type lang struct {
		path, bad, fixed string
		files            map[string]string
		server           func(b *testing.B) ([]string, map[string]any)
	}
	goLang := lang{goPath, goAdd, goFixed, map[string]string{"go.mod": goMod, "use.go": goUse}, func(b *testing.B) ([]string, map[string]any) {
		return []string{lspServer(b, "gopls")}, nil
	}}
	pyLang := lang{"calc.py", pyCalc, pyFixed, map[string]string{"use.py": pyUse}, func(b *testing.B) ([]string, map[string]any) {
		return []string{lspServer(b, "pyright"), "--stdio"}, map[string]any{"python": map[string]any{"analysis": map[string]any{"diagnosticMode": "openFilesOnly"}}}
	}}
	for _, c := range []struct {
		name   string
		lang   lang
		server bool
	}{{"go-none", goLang, false}, {"gopls", goLang, true}, {"python-none", pyLang, false}, {"pyright", pyLang, true}} {
		b.Run(c.name, func(b *testing.B) {
			l := c.lang
			files := map[string]string{l.path: l.fixed}
			for k, v := range l.files {
				files[k] = v
			}
			root := workspace(b, files)
			v := nvimtest.New(b, nvimtest.Options{Dir: root, Env: goEnv(b)})
			lua(b, v, "require('flow.tools').setup({workspace = ..., trusted = true})", root)
			if c.server {
				cmd, settings := l.server(b)
				attach(b, v, c.name, cmd, settings, root, l.path)
				callTool(b, v, "editor_diagnostics", map[string]any{"path": l.path, "timeout": 60000})
			} else {
				lua(b, v, "vim.cmd('edit ' .. ...)", l.path)
			}
			reg := editorFiles(b, v, root)
			var all, waits []time.Duration
			i := 0
			for b.Loop() {
				content := l.fixed
				if i%2 == 0 {
					content = l.bad
				}
				i++
				start := time.Now()
				out := callFile(b, reg, "file_write", map[string]any{"path": l.path, "content": content})
				all = append(all, time.Since(start))
				d, ok := out["editor_diagnostics"].(map[string]any)
				if c.server {
					want := "ok"
					if content == l.bad {
						want = "failed"
					}
					if !ok || d["status"] != want {
						b.Fatalf("file_write %d with %s = %v, want editor_diagnostics %s", i, c.name, out, want)
					}
					waits = append(waits, time.Duration(d["waited_ms"].(float64))*time.Millisecond)
				} else if ok {
					b.Fatalf("file_write without a server = %v, want no editor_diagnostics", out)
				}
			}
			med, max := medianMax(all)
			b.ReportMetric(med, "median-ms")
			b.ReportMetric(max, "max-ms")
			if len(waits) > 0 {
				med, max = medianMax(waits)
				b.ReportMetric(med, "wait-median-ms")
				b.ReportMetric(max, "wait-max-ms")
			}
		})
	}
}

// medianMax returns the median and the maximum of ds in milliseconds.
func medianMax(ds []time.Duration) (float64, float64) {
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return ms(s[len(s)/2]), ms(s[len(s)-1])
}
