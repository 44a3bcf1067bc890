package live

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const scriptDir = "../../../../scripts"

func TestScriptSyntax(t *testing.T) {
	t.Parallel()
	script := filepath.Join(scriptDir, "ollama-test.sh")
	if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n scripts/ollama-test.sh: %v\n%s", err, out)
	}
	// The script builds the version the tests look for.
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\nVERSION="+Version+"\n") {
		t.Errorf("scripts/ollama-test.sh does not set VERSION=%s", Version)
	}
	out, err := exec.Command("bash", script, "path").Output()
	if err != nil || strings.TrimSpace(string(out)) != filepath.Join(Dir(), "ollama") {
		t.Errorf("ollama-test.sh path = %q, %v, want %s", out, err, filepath.Join(Dir(), "ollama"))
	}
}

// TestMiniaudioStub compiles the decoding code of llama.cpp's
// mtmd-helper.cpp, as that file includes the header, against the stub the
// build puts in its place, and runs it: it must compile warning-free and
// refuse to decode.
func TestMiniaudioStub(t *testing.T) {
	t.Parallel()
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++ (the server build needs it too)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "decode.cpp")
	err = os.WriteFile(src, []byte(`#include <vector>
#define MINIAUDIO_IMPLEMENTATION
#define MA_NO_ENCODING
#define MA_NO_DEVICE_IO
#define MA_NO_RESOURCE_MANAGER
#define MA_NO_NODE_GRAPH
#define MA_NO_ENGINE
#define MA_NO_GENERATION
#define MA_API static
#include "miniaudio.h"

static bool decode(const unsigned char * buf, size_t len, int rate, std::vector<float> & out) {
    ma_decoder_config config = ma_decoder_config_init(ma_format_f32, 1, rate);
    ma_decoder decoder;
    if (ma_decoder_init_memory(buf, len, &config, &decoder) != MA_SUCCESS) return false;
    ma_uint64 frames, read;
    if (ma_decoder_get_length_in_pcm_frames(&decoder, &frames) != MA_SUCCESS) { ma_decoder_uninit(&decoder); return false; }
    out.resize(frames);
    if (ma_decoder_read_pcm_frames(&decoder, out.data(), frames, &read) != MA_SUCCESS) { ma_decoder_uninit(&decoder); return false; }
    ma_decoder_uninit(&decoder);
    return true;
}

int main() {
    const unsigned char wav[] = "RIFF\x24\0\0\0WAVEfmt ";
    std::vector<float> pcm;
    return decode(wav, sizeof wav, 16000, pcm) ? 1 : 0;
}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "decode")
	cmd := exec.Command(cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-I", filepath.Join(scriptDir, "ollama-test"), "-o", bin, src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compile against the stub: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin).CombinedOutput(); err != nil {
		t.Errorf("the stub decoded audio (or crashed): %v %s", err, strings.TrimSpace(string(out)))
	}
}
