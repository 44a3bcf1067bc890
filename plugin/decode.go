package plugin

import (
	"errors"
	"fmt"

	"github.com/neovim/go-client/msgpack"
)

// maxLuaDepth bounds the nesting of a decoded Lua result; the editor tool
// results nest four levels deep.
const maxLuaDepth = 256

// maxLuaAhead bounds the room made for a list's or a map's values before
// they are read.
const maxLuaAhead = 1024

// luaResult decodes a Lua result of nvim_exec_lua into the values
// go-client gives an interface{} (map[string]any, []any, int64, uint64,
// float64, bool, string, []byte, nil), with each map sized from the start
// and the map keys of the editor tool results shared instead of allocated
// per value: on an editor_context of 100 files it makes half the
// allocations and takes a tenth less time (BenchmarkDecodeSnapshot100).
// Unlike go-client's, it never makes room for more values than have
// arrived and it bounds nesting. Decode into a **luaResult: go-client
// cannot decode a nil into a *luaResult (it panics).
type luaResult struct{ v any }

// value is the decoded value; nil for a nil r (go-client's result for a
// nil Lua value when it decodes into a *luaResult).
func (r *luaResult) value() any {
	if r == nil {
		return nil
	}
	return r.v
}

// UnmarshalMsgPack implements msgpack.Unmarshaler: d holds the unpacked
// top-level value.
func (r *luaResult) UnmarshalMsgPack(d *msgpack.Decoder) error {
	v, err := decodeLua(d, 0)
	r.v = v
	return err
}

// errLuaKey is returned for a map with a key that is not a string, which
// go-client refuses too (a Lua table that is neither a list nor a map of
// names).
var errLuaKey = errors.New("msgpack: Lua result has a map key that is not a string")

// decodeLua decodes the value d holds.
func decodeLua(d *msgpack.Decoder, depth int) (any, error) {
	switch d.Type() {
	case msgpack.Int:
		return d.Int(), nil
	case msgpack.Uint:
		return d.Uint(), nil
	case msgpack.Float:
		return d.Float(), nil
	case msgpack.Bool:
		return d.Bool(), nil
	case msgpack.Nil:
		return nil, nil
	case msgpack.String:
		return internValue(d.BytesNoCopy()), nil
	case msgpack.Binary:
		return d.Bytes(), nil
	case msgpack.ArrayLen, msgpack.MapLen:
		if depth >= maxLuaDepth {
			return nil, fmt.Errorf("msgpack: Lua result nests deeper than %d levels", maxLuaDepth)
		}
	default:
		return nil, fmt.Errorf("msgpack: unexpected %v in a Lua result", d.Type())
	}
	// A length is the peer's word: what is made ahead of the values is
	// bounded, so a stream that declares more than it holds fails on its
	// end instead of allocating the declared length.
	n := d.Len()
	ahead := min(n, maxLuaAhead)
	if d.Type() == msgpack.ArrayLen {
		a := make([]any, 0, ahead)
		for range n {
			if err := d.Unpack(); err != nil {
				return nil, err
			}
			v, err := decodeLua(d, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	}
	m := make(map[string]any, ahead)
	for range n {
		if err := d.Unpack(); err != nil {
			return nil, err
		}
		if t := d.Type(); t != msgpack.String && t != msgpack.Binary {
			return nil, errLuaKey
		}
		key := internKey(d.BytesNoCopy())
		if err := d.Unpack(); err != nil {
			return nil, err
		}
		v, err := decodeLua(d, depth+1)
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
	return m, nil
}

// internKey returns the map key b, shared when it is one of the keys of
// the editor tool results (editor_context's snapshot above all). A switch
// on string(b) neither allocates nor hashes.
func internKey(b []byte) string {
	switch string(b) {
	case "status":
		return "status"
	case "path":
		return "path"
	case "buffers":
		return "buffers"
	case "bufnr":
		return "bufnr"
	case "changedtick":
		return "changedtick"
	case "modified":
		return "modified"
	case "loaded":
		return "loaded"
	case "disk":
		return "disk"
	case "exists":
		return "exists"
	case "type":
		return "type"
	case "size":
		return "size"
	case "ino":
		return "ino"
	case "dev":
		return "dev"
	case "mtime":
		return "mtime"
	case "ctime":
		return "ctime"
	case "sec":
		return "sec"
	case "nsec":
		return "nsec"
	case "sha256":
		return "sha256"
	case "hash_status":
		return "hash_status"
	case "error":
		return "error"
	}
	return string(b)
}

// internValue returns the string value b, shared when it is one common in
// the snapshot.
func internValue(b []byte) string {
	switch string(b) {
	case "file":
		return "file"
	case "ok":
		return "ok"
	case "directory":
		return "directory"
	}
	return string(b)
}
