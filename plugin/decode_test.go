package plugin

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/neovim/go-client/msgpack"
)

// encodeLua packs v (map[string]any, []any and scalars) as Neovim would.
func encodeLua(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := msgpack.NewEncoder(&buf).Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decodeBoth decodes p as go-client does into an interface{} and as
// luaResult does.
func decodeBoth(p []byte) (want any, wantErr error, got any, gotErr error) {
	wantErr = msgpack.NewDecoder(bytes.NewReader(p)).Decode(&want)
	var r *luaResult
	gotErr = msgpack.NewDecoder(bytes.NewReader(p)).Decode(&r)
	return want, wantErr, r.value(), gotErr
}

// A Lua result decodes to exactly the values go-client gives an
// interface{}: the same Go types, maps, lists, empty ones, keys outside
// the shared set, binary strings.
func TestLuaResultDecodesAsGoClient(t *testing.T) {
	snapshot := map[string]any{}
	for _, p := range []string{"a.go", "pkg/b.go"} {
		snapshot[p] = map[string]any{
			"path":    p,
			"buffers": []any{map[string]any{"bufnr": int64(3), "changedtick": int64(7), "modified": false, "loaded": true}},
			"disk": map[string]any{"exists": true, "type": "file", "size": int64(550), "ino": uint64(1) << 60,
				"dev": int64(2049), "mtime": map[string]any{"sec": int64(1764600000), "nsec": int64(12345)},
				"sha256": strings.Repeat("ab", 32)},
		}
	}
	for name, v := range map[string]any{
		"editor_context": map[string]any{"status": "ok", "workspace_snapshot": snapshot, "dirty_buffers": []any{},
			"lsp": map[string]any{"clients": map[string]any{}}, "workspace_snapshot_version": int64(1)},
		"scalars":     []any{int64(-1), int64(math.MinInt64), uint64(math.MaxUint64), 1.5, true, false, nil, "", "ok"},
		"binary":      []byte{0, 1, 2},
		"string":      "no key of the shared set",
		"nested":      []any{[]any{[]any{map[string]any{"x": []any{}}}}},
		"nil":         nil,
		"empty map":   map[string]any{},
		"unknown key": map[string]any{"zzz": "file", "status": "error"},
	} {
		t.Run(name, func(t *testing.T) {
			want, wantErr, got, err := decodeBoth(encodeLua(t, v))
			if err != nil || wantErr != nil {
				t.Fatalf("errors: luaResult %v, go-client %v", err, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("luaResult = %#v\ngo-client = %#v", got, want)
			}
		})
	}
}

// What go-client refuses, luaResult refuses: a map key that is not a
// string (a Lua table with both list and named entries), an extension, a
// truncated stream; and nesting beyond maxLuaDepth.
func TestLuaResultRefuses(t *testing.T) {
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	_ = e.PackMapLen(1)
	_ = e.PackInt(1)
	_ = e.PackString("x")
	intKey := bytes.Clone(buf.Bytes())
	buf.Reset()
	_ = e.PackExtension(0, []byte{1})
	ext := bytes.Clone(buf.Bytes())
	truncated := encodeLua(t, map[string]any{"status": "ok", "path": "a.go"})
	truncated = truncated[:len(truncated)-2]
	for name, p := range map[string][]byte{"int key": intKey, "extension": ext, "truncated": truncated} {
		var r *luaResult
		if err := msgpack.NewDecoder(bytes.NewReader(p)).Decode(&r); err == nil {
			t.Errorf("%s: decoded to %#v, want an error", name, r.value())
		}
	}
	if err := msgpack.NewDecoder(bytes.NewReader(intKey)).Decode(new(any)); err == nil {
		t.Error("go-client accepts an integer map key: luaResult's refusal no longer matches")
	}
	deep := bytes.Repeat([]byte{0x91}, maxLuaDepth+1) // arrays of one element
	deep = append(deep, 0xc0)
	var r *luaResult
	if err := msgpack.NewDecoder(bytes.NewReader(deep)).Decode(&r); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Errorf("%d nested arrays: err = %v, want the depth limit", maxLuaDepth+1, err)
	}
	ok := append(bytes.Repeat([]byte{0x91}, maxLuaDepth), 0xc0)
	if err := msgpack.NewDecoder(bytes.NewReader(ok)).Decode(&r); err != nil {
		t.Errorf("%d nested arrays: %v", maxLuaDepth, err)
	}
}

// FuzzLuaResult: luaResult never panics and never allocates what a
// length declares before the values are there; on bytes it decodes, it
// gives go-client's value. (go-client itself allocates a list's declared
// length first, so it only runs on bytes luaResult read to the end; and
// go-client's reader allocates a string's declared length before reading
// it, for both, so inputs that may declare a 32-bit length longer than
// themselves are left out.)
func FuzzLuaResult(f *testing.F) {
	f.Add(encodeLua(f, map[string]any{"status": "ok", "workspace_snapshot": map[string]any{"a": map[string]any{"disk": map[string]any{"exists": false}}}}))
	f.Add(encodeLua(f, []any{int64(-5), uint64(5), 2.5, "s", []byte("b"), nil, true}))
	f.Add([]byte{0x81, 0x01, 0xa1, 0x78})
	f.Add([]byte{0x9b, 0xdd, 0x63, 0x45, 0xca, 0xe9}) // a list that declares 1.6 billion values
	f.Fuzz(func(t *testing.T, p []byte) {
		for i, c := range p {
			if (c == 0xdb || c == 0xc6 || c == 0xc9) && i+4 < len(p) &&
				int(binary.BigEndian.Uint32(p[i+1:])) > len(p) {
				return
			}
		}
		var r *luaResult
		if err := msgpack.NewDecoder(bytes.NewReader(p)).Decode(&r); err != nil {
			return
		}
		var want any
		if err := msgpack.NewDecoder(bytes.NewReader(p)).Decode(&want); err != nil {
			t.Fatalf("go-client refuses what luaResult decodes (%#v): %v", r.value(), err)
		}
		// %#v prints maps by key and a NaN as NaN, which DeepEqual
		// finds unequal to itself.
		if got, want := fmt.Sprintf("%#v", r.value()), fmt.Sprintf("%#v", want); got != want {
			t.Fatalf("luaResult = %s\ngo-client = %s", got, want)
		}
	})
}

// snapshot100 is the msgpack of an editor_context result with 100 files.
func snapshot100(b testing.TB) []byte {
	snap := map[string]any{}
	for i := range 100 {
		p := fmt.Sprintf("pkg%d/file%d.go", i%10, i)
		snap[p] = map[string]any{
			"path":    p,
			"buffers": []any{map[string]any{"bufnr": int64(i + 1), "changedtick": int64(3), "modified": false, "loaded": true}},
			"disk": map[string]any{"exists": true, "type": "file", "size": int64(550), "ino": int64(1000 + i), "dev": int64(2049),
				"mtime": map[string]any{"sec": int64(1764600000), "nsec": int64(i)}, "ctime": map[string]any{"sec": int64(1764600000), "nsec": int64(i)},
				"sha256": strings.Repeat("ab", 32)},
		}
	}
	return encodeLua(b, map[string]any{"status": "ok", "workspace": "/w", "workspace_snapshot": snap, "dirty_buffers": []any{}, "workspace_snapshot_version": int64(1)})
}

// BenchmarkDecodeSnapshot100 compares luaResult with go-client's decoding
// into an interface{} on an editor_context result of 100 files.
func BenchmarkDecodeSnapshot100(b *testing.B) {
	p := snapshot100(b)
	b.Run("luaResult", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r *luaResult
			if err := msgpack.NewDecoder(bytes.NewReader(p)).Decode(&r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-client", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := msgpack.NewDecoder(bytes.NewReader(p)).Decode(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
