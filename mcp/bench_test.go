package mcp

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
)

// BenchmarkSession measures one whole session in process over pipes:
// initialize, notifications/initialized, tools/list, flow_status, EOF.
func BenchmarkSession(b *testing.B) {
	script := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"flow_status","arguments":{}}}`,
	}, "\n") + "\n"
	srv := NewServer(&fakeRuntime{}, Options{Version: "bench"})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			err := srv.Serve(ctx, inR, outW)
			outW.Close()
			done <- err
		}()
		go func() {
			_, _ = io.WriteString(inW, script)
			inW.Close()
		}()
		replies := 0
		br := bufio.NewReader(outR)
		for {
			if _, err := br.ReadBytes('\n'); err != nil {
				break
			}
			replies++
		}
		if err := <-done; err != nil || replies != 3 {
			b.Fatalf("Serve = %v with %d replies, want nil and 3", err, replies)
		}
	}
}
