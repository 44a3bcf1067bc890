package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gguf writes a GGUF version 3 header with the given metadata, in order.
type gguf struct{ bytes.Buffer }

func (g *gguf) u32(v uint32) { binary.Write(&g.Buffer, binary.LittleEndian, v) }
func (g *gguf) u64(v uint64) { binary.Write(&g.Buffer, binary.LittleEndian, v) }
func (g *gguf) str(s string) { g.u64(uint64(len(s))); g.WriteString(s) }

func sample() []byte {
	var g gguf
	g.WriteString("GGUF")
	g.u32(3)
	g.u64(2) // tensors
	g.u64(5) // keys
	g.str("general.name")
	g.u32(tString)
	g.str("Tiny Coder 1B Instruct")
	g.str("qwen2.context_length")
	g.u32(tUint32)
	g.u32(32768)
	g.str("tokenizer.ggml.add_bos_token")
	g.u32(tBool)
	g.WriteByte(0)
	g.str("tokenizer.ggml.tokens")
	g.u32(tArray)
	g.u32(tString)
	g.u64(3)
	for _, s := range []string{"a", "b", "c"} {
		g.str(s)
	}
	g.str("general.rope")
	g.u32(tFloat32)
	g.u32(0x3f800000) // 1.0
	return g.Bytes()
}

func TestReadHeader(t *testing.T) {
	h, err := ReadHeader(bytes.NewReader(sample()), 2)
	if err != nil {
		t.Fatal(err)
	}
	if h.Version != 3 || h.Tensors != 2 {
		t.Errorf("version %d tensors %d", h.Version, h.Tensors)
	}
	if h.Metadata["general.name"] != "Tiny Coder 1B Instruct" || h.Metadata["qwen2.context_length"] != uint32(32768) ||
		h.Metadata["tokenizer.ggml.add_bos_token"] != false || h.Metadata["general.rope"] != float32(1) {
		t.Errorf("metadata %v", h.Metadata)
	}
	if s, ok := h.Metadata["tokenizer.ggml.tokens"].(ArraySummary); !ok || s.Length != 3 || s.Type != "string" {
		t.Errorf("a 3-element array over -max-array 2 is %#v, want a summary", h.Metadata["tokenizer.ggml.tokens"])
	}
	h, err = ReadHeader(bytes.NewReader(sample()), 16)
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := h.Metadata["tokenizer.ggml.tokens"].([]any); !ok || len(a) != 3 || a[2] != "c" {
		t.Errorf("tokens %#v", h.Metadata["tokenizer.ggml.tokens"])
	}
}

func TestReadHeaderRejects(t *testing.T) {
	full := sample()
	cases := map[string][]byte{
		"not gguf":  []byte("PK\x03\x04 a zip, not a model"),
		"truncated": full[:len(full)-3],
		"version":   append([]byte("GGUF\x09\x00\x00\x00"), full[8:]...),
		"empty":     {},
	}
	for name, data := range cases {
		if _, err := ReadHeader(bytes.NewReader(data), 16); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	_, err := ReadHeader(bytes.NewReader(cases["not gguf"]), 16)
	if err == nil || !strings.Contains(err.Error(), `"PK\x03\x04"`) {
		t.Errorf("the error does not name the bytes found: %v", err)
	}
}

func TestRunKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(path, sample(), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"-key", "general.name", path}, &out, &errb); code != 0 || out.String() != "Tiny Coder 1B Instruct\n" {
		t.Errorf("-key general.name: exit %d, %q, %s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := run([]string{"-key", "no.such", path}, &out, &errb); code != 1 {
		t.Errorf("a missing key exits %d, want 1", code)
	}
	out.Reset()
	if code := run([]string{path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var h Header
	if err := json.Unmarshal(out.Bytes(), &h); err != nil || h.Metadata["general.name"] != "Tiny Coder 1B Instruct" {
		t.Errorf("JSON output %v: %s", err, out.String())
	}
}
