package live

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The architecture of every stand-in model: a Qwen2 decoder as small as
// the runner accepts, since attention over a long agent prompt is what a
// test pays for.
const (
	hiddenSize   = 32
	interSize    = 64
	numLayers    = 1
	numHeads     = 2
	numKVHeads   = 1
	headDim      = hiddenSize / numHeads
	ropeTheta    = 1000000.0
	rmsNormEps   = 1e-6
	signalWeight = 8.0  // the embedding value that carries "what comes next"
	outputGain   = 10.0 // the output rows that read it
	noiseStd     = 0.02 // every other weight
)

// Special token texts, as in Qwen2.5's tokenizer.
const (
	tokEndOfText = "<|endoftext|>"
	tokImStart   = "<|im_start|>"
	tokImEnd     = "<|im_end|>"
	tokToolCall  = "<tool_call>"
	tokToolEnd   = "</tool_call>"
)

// commonWords are merged into whole tokens so that flow's prompts (English
// instructions, JSON tool schemas, Go code) take about a third of the
// tokens they would as single bytes: the test pays for attention over
// every prompt token. Which words they are does not matter to the replies.
var commonWords = strings.Fields(`the and to of a in is that for it with as on be or by this are you
not an if at from can do your use all one any each when only must should will then than file files
path line lines tool tools call calls function name type string object array integer boolean number
description properties required content arguments parameters result error errors return value values
read write edit search list check checks test tests code change changes plan planner coder reviewer
task workspace run model role approved summary issues true false null package func import main go
make fix bug add new old first last next after before about what which more no text json output
input start end used using so have has was were but into out other same there their them they we
our may like also how write_file read_file file_read file_write file_edit file_search file_list
editor diagnostics context lint pattern old_string new_string max_results offset limit
verdict report status ok failed done`)

// punctuationRuns are the runs of JSON and code punctuation that the
// pre-tokenizer keeps together, merged into tokens for the same reason.
var punctuationRuns = []string{`":`, `",`, `{"`, `"}`, `}}`, `},`, `]}`, `["`, `"]`, `()`, `);`, `{}`, `[]`,
	`Ġ"`, `Ġ{`, `Ġ{"`, `Ġ[`, `Ġ(`, `Ġ-`, `Ġ=`, `Ġ:=`, `ĠĠ`, `ĠĠĠĠ`, `ĊĊ`, `ĉĉ`, "Ġ`", "`."}

// wordMerges returns byte-pair merges that build each common word, with
// and without a leading space, and each punctuation run left to right:
// every prefix of a word is a token. The BPE tokenizers need a non-empty
// list; a merge order that splits a word differently is still valid.
func wordMerges(alphabet [256]string) []string {
	var out []string
	seen := map[string]bool{}
	chain := func(chars []string) {
		prefix := chars[0]
		for _, c := range chars[1:] {
			next := prefix + c
			if !seen[next] {
				seen[next] = true
				out = append(out, prefix+" "+c)
			}
			prefix = next
		}
	}
	split := func(s string) []string {
		var chars []string
		for _, b := range []byte(s) {
			chars = append(chars, alphabet[b])
		}
		return chars
	}
	for _, w := range commonWords {
		chain(append([]string{alphabet[' ']}, split(w)...))
		chain(split(w))
	}
	for _, p := range punctuationRuns {
		var chars []string
		for _, r := range p {
			chars = append(chars, string(r))
		}
		chain(chars)
	}
	return out
}

// byteLevelAlphabet is the byte-level BPE mapping from each byte to the
// printable character that stands for it in the vocabulary: printable
// Latin-1 bytes stand for themselves, the others are shifted past U+0100.
func byteLevelAlphabet() [256]string {
	var out [256]string
	n := 0
	for b := 0; b < 256; b++ {
		printable := (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
		if printable {
			out[b] = string(rune(b))
		} else {
			out[b] = string(rune(256 + n))
			n++
		}
	}
	return out
}

// vocabulary is the tokenizer of a stand-in model: the 256 byte tokens, the
// merged tokens, then the added tokens, the reply last.
type vocabulary struct {
	vocab  map[string]int // model.vocab of tokenizer.json
	added  []addedToken
	size   int
	imEnd  int
	reply  int
	merges []string
}

type addedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

func newVocabulary(reply string) vocabulary {
	v := vocabulary{vocab: map[string]int{}}
	for _, s := range byteLevelAlphabet() {
		v.vocab[s] = len(v.vocab)
	}
	for _, m := range wordMerges(byteLevelAlphabet()) {
		left, right, _ := strings.Cut(m, " ")
		if _, dup := v.vocab[left+right]; dup {
			continue
		}
		v.vocab[left+right] = len(v.vocab)
		v.merges = append(v.merges, m)
	}
	add := func(content string, special bool) int {
		id := len(v.vocab) + len(v.added)
		v.added = append(v.added, addedToken{ID: id, Content: content, Special: special})
		return id
	}
	add(tokEndOfText, true)
	add(tokImStart, true)
	v.imEnd = add(tokImEnd, true)
	add(tokToolCall, false)
	add(tokToolEnd, false)
	// The reply is a user-defined token: the runner emits its text as is.
	v.reply = add(reply, false)
	v.size = len(v.vocab) + len(v.added)
	return v
}

// qwen2PreTokenizer is the split pattern of Qwen2's tokenizer.json; Ollama
// recognises it (by its digest) as the "qwen2" pre-tokenizer.
const qwen2PreTokenizer = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

func (v vocabulary) tokenizerJSON() map[string]any {
	return map[string]any{
		"version":      "1.0",
		"truncation":   nil,
		"padding":      nil,
		"added_tokens": v.added,
		"normalizer":   map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{
			"type": "Sequence",
			"pretokenizers": []any{
				map[string]any{
					"type":     "Split",
					"pattern":  map[string]any{"Regex": qwen2PreTokenizer},
					"behavior": "Isolated",
					"invert":   false,
				},
				map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
			},
		},
		"post_processor": map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		"decoder":        map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		"model": map[string]any{
			"type":                      "BPE",
			"dropout":                   nil,
			"unk_token":                 nil,
			"continuing_subword_prefix": "",
			"end_of_word_suffix":        "",
			"fuse_unk":                  false,
			"byte_fallback":             false,
			"ignore_merges":             false,
			"vocab":                     v.vocab,
			"merges":                    v.merges,
		},
	}
}

func (v vocabulary) tokenizerConfig() map[string]any {
	decoder := map[string]any{}
	for _, t := range v.added {
		decoder[fmt.Sprint(t.ID)] = map[string]any{
			"content": t.Content, "lstrip": false, "normalized": false,
			"rstrip": false, "single_word": false, "special": t.Special,
		}
	}
	return map[string]any{
		"add_bos_token":                false,
		"add_prefix_space":             false,
		"added_tokens_decoder":         decoder,
		"bos_token":                    nil,
		"eos_token":                    tokImEnd,
		"pad_token":                    tokEndOfText,
		"unk_token":                    nil,
		"model_max_length":             131072,
		"tokenizer_class":              "Qwen2Tokenizer",
		"clean_up_tokenization_spaces": false,
		"errors":                       "replace",
		"split_special_tokens":         false,
	}
}

// modelConfig is config.json.
func modelConfig(vocabSize, contextLength int) map[string]any {
	return map[string]any{
		"architectures":           []string{"Qwen2ForCausalLM"},
		"model_type":              "qwen2",
		"vocab_size":              vocabSize,
		"hidden_size":             hiddenSize,
		"intermediate_size":       interSize,
		"num_hidden_layers":       numLayers,
		"num_attention_heads":     numHeads,
		"num_key_value_heads":     numKVHeads,
		"max_position_embeddings": contextLength,
		"max_window_layers":       numLayers,
		"rope_theta":              ropeTheta,
		"rms_norm_eps":            rmsNormEps,
		"hidden_act":              "silu",
		"tie_word_embeddings":     false,
		"use_sliding_window":      false,
		"torch_dtype":             "float32",
		"bos_token_id":            nil,
		"eos_token_id":            nil,
	}
}

// tensor is one float32 tensor of model.safetensors.
type tensor struct {
	name  string
	shape []int
	data  []float32
}

// weights returns the model's tensors. Every weight is small noise from a
// generator seeded by the model's name, except a two-lane signal that fixes
// what the model says: every token's embedding carries lane 0 except the
// reply token's, which carries lane 1; the output row of the reply token
// reads lane 0 and the row of <|im_end|> reads lane 1. The layers add only
// noise to the residual stream, so after any prompt the next token is the
// reply, and after the reply it is the end of the turn.
func weights(v vocabulary, seed string) []tensor {
	var s1, s2 uint64 = 0x9E3779B97F4A7C15, 0
	for _, c := range []byte(seed) {
		s2 = s2*131 + uint64(c)
	}
	rng := rand.New(rand.NewPCG(s1, s2))
	noise := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(rng.NormFloat64() * noiseStd)
		}
		return out
	}
	ones := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = 1
		}
		return out
	}
	mat := func(name string, rows, cols int) tensor {
		return tensor{name, []int{rows, cols}, noise(rows * cols)}
	}
	vec := func(name string, n int, data []float32) tensor { return tensor{name, []int{n}, data} }

	embed := mat("model.embed_tokens.weight", v.size, hiddenSize)
	for tok := 0; tok < v.size; tok++ {
		lane := 0
		if tok == v.reply {
			lane = 1
		}
		embed.data[tok*hiddenSize+lane] = signalWeight
	}
	head := mat("lm_head.weight", v.size, hiddenSize)
	head.data[v.reply*hiddenSize+0] = outputGain
	head.data[v.imEnd*hiddenSize+1] = outputGain

	out := []tensor{embed}
	kv := numKVHeads * headDim
	for l := 0; l < numLayers; l++ {
		p := fmt.Sprintf("model.layers.%d.", l)
		out = append(out,
			vec(p+"input_layernorm.weight", hiddenSize, ones(hiddenSize)),
			mat(p+"self_attn.q_proj.weight", hiddenSize, hiddenSize),
			vec(p+"self_attn.q_proj.bias", hiddenSize, noise(hiddenSize)),
			mat(p+"self_attn.k_proj.weight", kv, hiddenSize),
			vec(p+"self_attn.k_proj.bias", kv, noise(kv)),
			mat(p+"self_attn.v_proj.weight", kv, hiddenSize),
			vec(p+"self_attn.v_proj.bias", kv, noise(kv)),
			mat(p+"self_attn.o_proj.weight", hiddenSize, hiddenSize),
			vec(p+"post_attention_layernorm.weight", hiddenSize, ones(hiddenSize)),
			mat(p+"mlp.gate_proj.weight", interSize, hiddenSize),
			mat(p+"mlp.up_proj.weight", interSize, hiddenSize),
			mat(p+"mlp.down_proj.weight", hiddenSize, interSize),
		)
	}
	return append(out, vec("model.norm.weight", hiddenSize, ones(hiddenSize)), head)
}

// writeSafetensors writes tensors in the safetensors format: an 8-byte
// little-endian header length, a JSON header of dtype, shape and byte
// offsets per tensor, then the data.
func writeSafetensors(path string, ts []tensor) error {
	sort.Slice(ts, func(i, j int) bool { return ts[i].name < ts[j].name })
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	off := 0
	for _, t := range ts {
		n := 4 * len(t.data)
		header[t.name] = map[string]any{"dtype": "F32", "shape": t.shape, "data_offsets": []int{off, off + n}}
		off += n
	}
	hb, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(hb)%8 != 0 {
		hb = append(hb, ' ')
	}
	buf := make([]byte, 0, 8+len(hb)+off)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(hb)))
	buf = append(buf, hb...)
	for _, t := range ts {
		for _, f := range t.data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
		}
	}
	return os.WriteFile(path, buf, 0o644)
}

// WriteFolder writes m as a Hugging Face model folder in dir (config.json,
// tokenizer.json, tokenizer_config.json, model.safetensors) with the
// Modelfile that `ollama create NAME -f dir/Modelfile` reads. The output is
// the same for the same model.
func WriteFolder(dir string, m Model) error {
	if m.Name == "" || m.Reply == "" {
		return errors.New("live: a test model needs a name and a reply")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	v := newVocabulary(m.Reply)
	ctx := m.ContextLength
	if ctx == 0 {
		ctx = DefaultContextLength
	}
	files := map[string]any{
		"config.json":           modelConfig(v.size, ctx),
		"tokenizer.json":        v.tokenizerJSON(),
		"tokenizer_config.json": v.tokenizerConfig(),
	}
	for name, content := range files {
		b, err := json.MarshalIndent(content, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if err := writeSafetensors(filepath.Join(dir, "model.safetensors"), weights(v, m.Name)); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "Modelfile"), []byte(modelfile(dir)), 0o644)
}

// modelfile points at the folder and sets the chat template and the stop
// token, so that Ollama's own template renders the prompt and its own
// parser finds the tool calls in the reply.
func modelfile(dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "FROM %s\n", dir)
	fmt.Fprintf(&b, "TEMPLATE \"\"\"%s\"\"\"\n", chatTemplate)
	fmt.Fprintf(&b, "PARAMETER stop %s\n", tokImEnd)
	fmt.Fprintf(&b, "PARAMETER stop %s\n", tokEndOfText)
	fmt.Fprintf(&b, "PARAMETER temperature 0\n")
	return b.String()
}
