package tools

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// finder.index agrees with bytes.Index, also on text full of the rare
// byte (where it hands over to bytes.Index) and at the edges of data.
func TestFinderIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, alphabet := range []string{"ab", "abc!", "ctx.Err() !=nil", "xyz\n"} {
		for range 2000 {
			data := make([]byte, rng.IntN(300))
			for i := range data {
				data[i] = alphabet[rng.IntN(len(alphabet))]
			}
			lit := make([]byte, 2+rng.IntN(4))
			for i := range lit {
				lit[i] = alphabet[rng.IntN(len(alphabet))]
			}
			if got, want := newFinder(lit).index(data), bytes.Index(data, lit); got != want {
				t.Fatalf("index(%q, %q) = %d, want %d", data, lit, got, want)
			}
		}
	}
	f := newFinder([]byte("ctx.Err() != nil"))
	if f.rare != '!' {
		t.Errorf("rare byte of ctx.Err() != nil = %q, want '!'", f.rare)
	}
	if got := f.index([]byte("if ctx.Err() != nil")); got != 3 {
		t.Errorf("index at the end = %d, want 3", got)
	}
}
