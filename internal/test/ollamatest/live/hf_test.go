package live

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
)

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestWriteFolder checks the folder is what Ollama's converter expects:
// contiguous token ids with the reply last, the Qwen2 pre-tokenizer, a
// safetensors file whose tensors have the shapes config.json implies, and
// the same bytes on every run.
func TestWriteFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := ModelTwoCalls
	if err := WriteFolder(dir, m); err != nil {
		t.Fatal(err)
	}

	var cfg struct {
		Architectures []string `json:"architectures"`
		VocabSize     int      `json:"vocab_size"`
		Hidden        int      `json:"hidden_size"`
		Layers        int      `json:"num_hidden_layers"`
		Context       int      `json:"max_position_embeddings"`
	}
	readJSON(t, filepath.Join(dir, "config.json"), &cfg)
	if cfg.Architectures[0] != "Qwen2ForCausalLM" || cfg.Hidden != hiddenSize || cfg.Context != DefaultContextLength {
		t.Errorf("config = %+v", cfg)
	}

	var tok struct {
		AddedTokens []addedToken `json:"added_tokens"`
		Model       struct {
			Vocab  map[string]int `json:"vocab"`
			Merges []string       `json:"merges"`
		} `json:"model"`
		PreTokenizer struct {
			PreTokenizers []struct {
				Type    string `json:"type"`
				Pattern struct {
					Regex string `json:"Regex"`
				} `json:"pattern"`
			} `json:"pretokenizers"`
		} `json:"pre_tokenizer"`
	}
	readJSON(t, filepath.Join(dir, "tokenizer.json"), &tok)
	seen := map[int]bool{}
	for _, id := range tok.Model.Vocab {
		seen[id] = true
	}
	for _, a := range tok.AddedTokens {
		seen[a.ID] = true
	}
	for id := 0; id < cfg.VocabSize; id++ {
		if !seen[id] {
			t.Fatalf("token id %d missing: ids must be 0..%d", id, cfg.VocabSize-1)
		}
	}
	if len(seen) != cfg.VocabSize {
		t.Errorf("%d token ids, config says %d", len(seen), cfg.VocabSize)
	}
	last := tok.AddedTokens[len(tok.AddedTokens)-1]
	if last.Content != m.Reply || last.Special || last.ID != cfg.VocabSize-1 {
		t.Errorf("last added token = %+v, want the reply as a user-defined token", last)
	}
	for _, b := range []byte(" \n{\"}") {
		if _, ok := tok.Model.Vocab[byteLevelAlphabet()[b]]; !ok {
			t.Errorf("byte %q has no token", b)
		}
	}
	// Ollama names the pre-tokenizer by the SHA-256 of the Split patterns.
	sum := sha256.Sum256([]byte(tok.PreTokenizer.PreTokenizers[0].Pattern.Regex))
	if got := hex.EncodeToString(sum[:]); got != "1ff7f41064896984db5d1bb6ff64fa4bc29007d08c1b439e505b7392777a319e" {
		t.Errorf("pre-tokenizer digest %s is not Qwen2's", got)
	}

	raw, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(raw)
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &header); err != nil {
		t.Fatal(err)
	}
	var embed struct {
		Shape   []int `json:"shape"`
		Offsets []int `json:"data_offsets"`
	}
	json.Unmarshal(header["model.embed_tokens.weight"], &embed)
	if embed.Shape[0] != cfg.VocabSize || embed.Shape[1] != cfg.Hidden || embed.Offsets[1]-embed.Offsets[0] != 4*cfg.VocabSize*cfg.Hidden {
		t.Errorf("embedding = %+v, want %dx%d float32", embed, cfg.VocabSize, cfg.Hidden)
	}
	wantTensors := 1 + 12*cfg.Layers + 2 + 1 // embeddings, layers, norm and head, metadata
	if len(header) != wantTensors {
		t.Errorf("%d header entries, want %d", len(header), wantTensors)
	}
	total := 0
	for k, v := range header {
		if k == "__metadata__" {
			continue
		}
		var e struct {
			Offsets []int `json:"data_offsets"`
		}
		json.Unmarshal(v, &e)
		total += e.Offsets[1] - e.Offsets[0]
	}
	if uint64(len(raw)) != 8+n+uint64(total) {
		t.Errorf("file is %d bytes, header says %d", len(raw), 8+n+uint64(total))
	}

	again := t.TempDir()
	if err := WriteFolder(again, m); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors"} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, _ := os.ReadFile(filepath.Join(again, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs", f)
		}
	}
	mf, _ := os.ReadFile(filepath.Join(dir, "Modelfile"))
	if !strings.HasPrefix(string(mf), "FROM "+dir+"\n") || !strings.Contains(string(mf), "PARAMETER stop <|im_end|>") {
		t.Errorf("Modelfile:\n%s", mf)
	}
}

// TestChatTemplate renders the template the way Ollama does (Go
// text/template over messages and tools) and checks the Qwen2.5 shape.
func TestChatTemplate(t *testing.T) {
	t.Parallel()
	// Ollama finds the tool-call tag only after a field node .ToolCalls.
	if !strings.Contains(chatTemplate, "{{- else if .ToolCalls }}<tool_call>\n") {
		t.Error("the template must introduce tool calls with {{ if .ToolCalls }}<tool_call>")
	}
	tmpl, err := template.New("").Parse(chatTemplate)
	if err != nil {
		t.Fatal(err)
	}
	type fn struct{ Name, Arguments string }
	type call struct{ Function fn }
	type msg struct {
		Role, Content string
		ToolCalls     []call
	}
	var b strings.Builder
	err = tmpl.Execute(&b, map[string]any{
		"System": "You are the coder.",
		"Tools":  []map[string]any{{"Function": `{"name":"file_read"}`}},
		"Messages": []msg{
			{Role: "user", Content: "Fix calc.go."},
			{Role: "assistant", ToolCalls: []call{{fn{"file_read", `{"path":"calc.go"}`}}}},
			{Role: "tool", Content: "package calc"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"<|im_start|>system\nYou are the coder.\n\n# Tools\n",
		`{"type": "function", "function": {"name":"file_read"}}`,
		"<|im_start|>user\nFix calc.go.<|im_end|>\n",
		"<|im_start|>assistant\n<tool_call>\n{\"name\": \"file_read\", \"arguments\": {\"path\":\"calc.go\"}}\n</tool_call><|im_end|>\n",
		"<|im_start|>user\n<tool_response>\npackage calc\n</tool_response><|im_end|>\n",
	}
	got := b.String()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("rendered prompt lacks %q:\n%s", w, got)
		}
	}
	if !strings.HasSuffix(got, "<|im_start|>assistant\n") {
		t.Errorf("rendered prompt does not end with an open assistant turn:\n%q", got)
	}
}
