package ollama

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loopUnit is the 273-byte piece that Qwen2.5-Coder 1.5B repeated 102
// times in one reply of an evaluation run (js-cart-currency), until the
// 8192-token bound, after the call's 10-minute timeout had already failed
// the run.
const loopUnit = "I also changed the `cartTotal` function in `cart.js` to pass the currency code on to `formatPrice`.\n\n" +
	"```json\n{\n  \"name\": \"file_edit\",\n  \"arguments\": {\n    \"path\": \"src/cart.js\",\n" +
	"    \"old_string\": \"formatPrice(cents)\",\n    \"new_string\": \"formatPrice(cents, currency)\"\n  }\n}\n```\n\n"

// wholeEcho is the 1,044-byte piece a whole-file coder repeated in a
// repair cycle of an evaluation run (js-chunk, 2026-12-07): the changed
// file as its message showed it and the message's next line, 14 times
// until the run's time ran out.
var wholeEcho = func() string {
	b, err := os.ReadFile("testdata/loop-whole-echo.txt")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// piece400 is 400 bytes that hold no repetition themselves.
var piece400 = func() string {
	var b strings.Builder
	for i := 0; b.Len() < 400; i++ {
		fmt.Fprintf(&b, "%d,", i)
	}
	return b.String()[:400]
}()

func TestRepeatedTail(t *testing.T) {
	t.Parallel()
	prefix := "I changed the `formatPrice` function in `cart.js` to take a currency code.\n\n"
	// The prefix ends in "\n\n", as the piece does: the first copy is taken
	// to start two bytes earlier, so the kept text ends before the piece's
	// own "\n\n". The same holds for one line and "\n".
	tests := []struct {
		name     string
		text     string
		wantKeep int // -1: no loop
	}{
		{"the recorded loop", prefix + strings.Repeat(loopUnit, 102), len(prefix) + len(loopUnit) - 2},
		{"the recorded loop, cut mid-piece", prefix + strings.Repeat(loopUnit, 5) + loopUnit[:100], len(prefix) + len(loopUnit) - 2},
		{"four copies are enough", prefix + strings.Repeat(loopUnit, 4), len(prefix) + len(loopUnit) - 2},
		{"three copies are not", prefix + strings.Repeat(loopUnit, 3), -1},
		{"three copies are not, even spanning 1024 bytes", "start " + strings.Repeat(piece400, 3), -1},
		{"four such copies are", "start " + strings.Repeat(piece400, 4), len("start ") + len(piece400)},
		{"spaces without end", "answer:" + strings.Repeat(" ", 2000), len("answer:") + 1},
		{"one line again and again", "x := 1\n" + strings.Repeat("return nil\n", 200), len("x := 1\n") + len("return nil\n") - 1},
		{"a short repetition is not a loop", "a" + strings.Repeat("}\n", 100) + "done", -1},
		{"a repeated tail shorter than the span", strings.Repeat("ab", 400), -1},
		{"a piece longer than the longest looked for", strings.Repeat(strings.Repeat("y", loopMaxPeriod)+"z", 4), -1},
		// The prefix and the piece both end in "e.\n\n": the first copy is taken
		// to start four bytes earlier.
		{"the recorded whole-file loop, three copies", prefix + strings.Repeat(wholeEcho, 3), len(prefix) + len(wholeEcho) - 4},
		{"the recorded whole-file loop, cut mid-piece", prefix + strings.Repeat(wholeEcho, 3) + wholeEcho[:300], len(prefix) + len(wholeEcho) - 4},
		{"two copies of a long piece are not", prefix + strings.Repeat(wholeEcho, 2), -1},
		{"three copies of a kilobyte are not", "start " + strings.Repeat(strings.Repeat(piece400, 3)[:1023]+"!", 3), -1},
		{"empty", "", -1},
	}
	for _, tc := range tests {
		keep, ok := repeatedTail(tc.text)
		if tc.wantKeep < 0 {
			if ok {
				t.Errorf("%s: repeatedTail = %d, true; want no loop", tc.name, keep)
			}
			continue
		}
		if !ok || keep != tc.wantKeep {
			t.Errorf("%s: repeatedTail = %d, %v; want %d, true", tc.name, keep, ok, tc.wantKeep)
		}
	}
}

// TestLoopGuardLeavesRealCodeAlone streams this package's and the agent's
// source files through the guard, as a model answering with whole files
// would, and expects no loop in any prefix of them.
func TestLoopGuardLeavesRealCodeAlone(t *testing.T) {
	t.Parallel()
	var files []string
	for _, pattern := range []string{"*.go", "../../agent/*.go", "../../codeblock/*.go", "../../../eval/tasks/*/project/*"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found %d source files, want at least 20", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a folder
		}
		var g loopGuard
		s := string(b)
		for n := 1; n <= len(s); n += 7 {
			if keep, ok := g.looping(s[:n]); ok {
				t.Errorf("%s: a loop found after %d bytes (keep %d): %q", f, n, keep, s[max(0, n-200):n])
				break
			}
		}
	}
}

// BenchmarkLoopGuard measures the guard's cost over one long reply that
// never loops, streamed in token-sized pieces: this package's openai.go,
// about 11 KB, 4 bytes at a time.
func BenchmarkLoopGuard(b *testing.B) {
	src, err := os.ReadFile("openai.go")
	if err != nil {
		b.Fatal(err)
	}
	s := string(src)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		var g loopGuard
		for n := 4; n <= len(s); n += 4 {
			if _, ok := g.looping(s[:n]); ok {
				b.Fatal("a loop found in openai.go")
			}
		}
	}
}
