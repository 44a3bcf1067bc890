package tools

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"flow/internal/text"
)

// randomText returns n bytes of text rich in what JSON must escape.
func randomText(rng *rand.Rand, n int) string {
	pieces := []string{`"`, `\`, "\n", "\t", "\r", "é", "→", "😀", "\x00", "\x1f", "<", ">", "&", "\u2028",
		"a", "b", "func x() {", "}", " ", "\xff", `\"`, `""`, "\\n"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()[:n]
}

func TestReadResultBoundedProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	files := map[string]string{}
	sizes := []int{0, 1, 100, 13000, 20000, 39999, 40000, 40001, 80000, 150000, 262144}
	for i, n := range sizes {
		files["f"+string(rune('a'+i))+".txt"] = randomText(rng, n)
	}
	for i := range 12 {
		files["r"+string(rune('a'+i))+".txt"] = randomText(rng, rng.IntN(262144))
	}
	r := New(newDisk(t, false, files), Options{})
	for name, content := range files {
		res, body := call(t, r, "coder", "file_read", mustJSON(t, map[string]any{"path": name}))
		if res.Status != "ok" {
			t.Fatalf("file_read %s = %s", name, res.Content)
		}
		n := utf8.RuneCountInString(res.Content)
		if n > MaxResultChars || len(res.Content) > maxResultBytes {
			t.Fatalf("file_read %s: result is %d chars, %d bytes", name, n, len(res.Content))
		}
		got := body["content"].(string)
		full := validText([]byte(content))
		if !strings.HasPrefix(full, got) {
			t.Fatalf("file_read %s: content is not a prefix of the file", name)
		}
		if res.Truncated != (got != full) || (body["truncated"] == true) != res.Truncated {
			t.Fatalf("file_read %s: Truncated = %v, body truncated = %v, cut = %v", name, res.Truncated, body["truncated"], got != full)
		}
		if res.Truncated && body["hint"] == nil {
			t.Fatalf("file_read %s: truncated without a hint", name)
		}
		// A truncated result should still use most of the budget.
		if res.Truncated && n < MaxResultChars/3 {
			t.Errorf("file_read %s: truncated result is only %d chars", name, n)
		}
	}
}

// TestReadLargeSourceFile is where the reference program was weak: a 250 KB
// file of quotes, backslashes and newlines read whole.
func TestReadLargeSourceFile(t *testing.T) {
	line := `	s := "a \"quoted\" \\path\\ with \\n escapes" // "comment"` + "\n"
	content := strings.Repeat(line, 250000/len(line))
	r := New(newDisk(t, false, map[string]string{"big.go": content}), Options{})
	res, body := call(t, r, "coder", "file_read", `{"path":"big.go"}`)
	if res.Status != "ok" || !res.Truncated || body["truncated"] != true {
		t.Fatalf("file_read big.go: status %q truncated %v", res.Status, res.Truncated)
	}
	if n := utf8.RuneCountInString(res.Content); n > MaxResultChars {
		t.Fatalf("result is %d chars, want <= %d", n, MaxResultChars)
	}
	got := body["content"].(string)
	if !strings.HasPrefix(content, got) || !strings.HasSuffix(got, "\n") {
		t.Fatalf("content is not a whole-line prefix of the file")
	}
	lines := strings.Count(got, "\n")
	if body["end_line"] != float64(lines) || body["start_line"] != 1.0 {
		t.Errorf("lines = %v..%v, want 1..%d", body["start_line"], body["end_line"], lines)
	}
	hint, _ := body["hint"].(string)
	if !strings.Contains(hint, "start_line="+itoa(lines+1)) {
		t.Errorf("hint = %q, want a start_line to read on", hint)
	}
	// Reading on as the hint says returns the next lines.
	res2, body2 := call(t, r, "coder", "file_read", mustJSON(t, map[string]any{"path": "big.go", "start_line": lines + 1, "end_line": lines + 10}))
	if res2.Truncated || body2["content"] != strings.Repeat(line, 10) {
		t.Errorf("reading on = %.200s", res2.Content)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestReadOneHugeLine(t *testing.T) {
	content := strings.Repeat(`"\`, 100000)
	r := New(newDisk(t, false, map[string]string{"min.js": content}), Options{})
	res, body := call(t, r, "coder", "file_read", `{"path":"min.js"}`)
	if !res.Truncated || body["end_line"] != 1.0 || !strings.Contains(body["hint"].(string), "line 1 is longer") {
		t.Fatalf("file_read min.js = %.300s", res.Content)
	}
	if got := body["content"].(string); len(got) < 15000 || !strings.HasPrefix(content, got) {
		t.Fatalf("content is %d bytes, want a long prefix", len(got))
	}
}

func TestFitFallback(t *testing.T) {
	// Nothing fits, not even keep=0: the fixed object comes back.
	huge := strings.Repeat("x", MaxResultChars+1)
	content, truncated := fit("ok", 10, func(int) any { return map[string]string{"status": "ok", "x": huge} })
	if !truncated || !fits([]byte(content)) || !strings.Contains(content, `"truncated":true`) {
		t.Fatalf("fit() = %q, %v", content, truncated)
	}
	// Non-ASCII content is bounded in bytes too.
	cjk := strings.Repeat("漢", MaxResultChars-100)
	content, truncated = fit("ok", utf8.RuneCountInString(cjk), func(keep int) any {
		return map[string]string{"status": "ok", "c": text.Truncate(cjk, keep)}
	})
	if !truncated || len(content) > maxResultBytes || len(content) < maxResultBytes-100 {
		t.Fatalf("fit(CJK) = %d bytes, truncated %v; want just under %d bytes", len(content), truncated, maxResultBytes)
	}
}
