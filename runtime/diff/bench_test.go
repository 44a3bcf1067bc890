package diff

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkFileLarge diffs a file at the file tools' 256 KiB limit with a
// change every 100 lines, the worst case a run can produce.
func BenchmarkFileLarge(b *testing.B) {
	var before, after strings.Builder
	for i := 0; before.Len() < 256<<10-64; i++ {
		fmt.Fprintf(&before, "\tvalue%d := compute(%d) // line\n", i, i)
		if i%100 == 0 {
			fmt.Fprintf(&after, "\tvalue%d := compute(%d) // changed\n", i, i)
		} else {
			fmt.Fprintf(&after, "\tvalue%d := compute(%d) // line\n", i, i)
		}
	}
	old, cur := []byte(before.String()), []byte(after.String())
	b.SetBytes(int64(len(old)))
	b.ReportAllocs()
	for b.Loop() {
		File("big.go", old, cur, true, true, 0)
	}
}
