// Command ggufinfo prints the metadata of a GGUF model file as one JSON
// object: the format version, the tensor count and every key/value pair of
// the header (arrays longer than -max-array elements are summarised by their
// length), so that a script can tell which model a downloaded file holds
// (general.name, general.architecture, tokenizer.chat_template) without
// loading it.
//
//	ggufinfo [-max-array N] [-key NAME] FILE
//
// With -key, only that value is printed (a string as raw text); a missing
// key exits 1. A file that is not GGUF exits 1 with a message naming the
// first bytes found.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ggufinfo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	maxArray := fs.Int("max-array", 16, "print arrays of at most `n` elements in full")
	key := fs.String("key", "", "print only the value of metadata key `name`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: ggufinfo [-max-array N] [-key NAME] FILE")
		return 2
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "ggufinfo: %v\n", err)
		return 1
	}
	defer f.Close()
	h, err := ReadHeader(bufio.NewReaderSize(f, 1<<20), *maxArray)
	if err != nil {
		fmt.Fprintf(stderr, "ggufinfo: %s: %v\n", fs.Arg(0), err)
		return 1
	}
	if *key != "" {
		v, ok := h.Metadata[*key]
		if !ok {
			fmt.Fprintf(stderr, "ggufinfo: %s: no metadata key %q\n", fs.Arg(0), *key)
			return 1
		}
		if s, ok := v.(string); ok {
			fmt.Fprintln(stdout, s)
			return 0
		}
		b, _ := json.Marshal(v)
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "ggufinfo: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, string(b))
	return 0
}

// Header is the part of a GGUF file before the tensor data.
type Header struct {
	Version  uint32         `json:"version"`
	Tensors  uint64         `json:"tensors"`
	Metadata map[string]any `json:"metadata"`
}

// ArraySummary stands for an array too long to print.
type ArraySummary struct {
	Type   string `json:"type"`
	Length uint64 `json:"length"`
}

// GGUF value types (the format's own numbering).
const (
	tUint8 = iota
	tInt8
	tUint16
	tInt16
	tUint32
	tInt32
	tFloat32
	tBool
	tString
	tArray
	tUint64
	tInt64
	tFloat64
)

var typeNames = map[uint32]string{
	tUint8: "uint8", tInt8: "int8", tUint16: "uint16", tInt16: "int16",
	tUint32: "uint32", tInt32: "int32", tFloat32: "float32", tBool: "bool",
	tString: "string", tArray: "array", tUint64: "uint64", tInt64: "int64",
	tFloat64: "float64",
}

// Limits that keep a corrupt file from asking for absurd allocations.
const (
	maxKeys      = 1 << 20
	maxStringLen = 64 << 20
)

type reader struct {
	r   io.Reader
	buf [8]byte
}

func (r *reader) n(k int) ([]byte, error) {
	if _, err := io.ReadFull(r.r, r.buf[:k]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return r.buf[:k], nil
}

func (r *reader) u32() (uint32, error) {
	b, err := r.n(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *reader) u64() (uint64, error) {
	b, err := r.n(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (r *reader) str() (string, error) {
	n, err := r.u64()
	if err != nil {
		return "", err
	}
	if n > maxStringLen {
		return "", fmt.Errorf("string of %d bytes is too long", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.r, b); err != nil {
		return "", io.ErrUnexpectedEOF
	}
	return string(b), nil
}

// ReadHeader reads the magic, version, counts and metadata of a GGUF file
// (versions 2 and 3, little-endian).
func ReadHeader(in io.Reader, maxArray int) (*Header, error) {
	r := &reader{r: in}
	magic, err := r.n(4)
	if err != nil {
		return nil, fmt.Errorf("not a GGUF file: %w", err)
	}
	if string(magic) != "GGUF" {
		return nil, fmt.Errorf("not a GGUF file: starts with %q, want \"GGUF\"", magic)
	}
	h := &Header{Metadata: map[string]any{}}
	if h.Version, err = r.u32(); err != nil {
		return nil, err
	}
	if h.Version < 2 || h.Version > 3 {
		return nil, fmt.Errorf("GGUF version %d is not supported (2 or 3)", h.Version)
	}
	if h.Tensors, err = r.u64(); err != nil {
		return nil, err
	}
	nkv, err := r.u64()
	if err != nil {
		return nil, err
	}
	if nkv > maxKeys {
		return nil, fmt.Errorf("%d metadata keys is implausible", nkv)
	}
	for i := uint64(0); i < nkv; i++ {
		k, err := r.str()
		if err != nil {
			return nil, fmt.Errorf("metadata key %d: %w", i, err)
		}
		typ, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("metadata %s: %w", k, err)
		}
		v, err := r.value(typ, maxArray)
		if err != nil {
			return nil, fmt.Errorf("metadata %s: %w", k, err)
		}
		h.Metadata[k] = v
	}
	return h, nil
}

func (r *reader) value(typ uint32, maxArray int) (any, error) {
	switch typ {
	case tUint8, tInt8, tBool:
		b, err := r.n(1)
		if err != nil {
			return nil, err
		}
		switch typ {
		case tInt8:
			return int8(b[0]), nil
		case tBool:
			return b[0] != 0, nil
		}
		return b[0], nil
	case tUint16, tInt16:
		b, err := r.n(2)
		if err != nil {
			return nil, err
		}
		v := binary.LittleEndian.Uint16(b)
		if typ == tInt16 {
			return int16(v), nil
		}
		return v, nil
	case tUint32, tInt32, tFloat32:
		v, err := r.u32()
		if err != nil {
			return nil, err
		}
		switch typ {
		case tInt32:
			return int32(v), nil
		case tFloat32:
			return math.Float32frombits(v), nil
		}
		return v, nil
	case tUint64, tInt64, tFloat64:
		v, err := r.u64()
		if err != nil {
			return nil, err
		}
		switch typ {
		case tInt64:
			return int64(v), nil
		case tFloat64:
			return math.Float64frombits(v), nil
		}
		return v, nil
	case tString:
		return r.str()
	case tArray:
		et, err := r.u32()
		if err != nil {
			return nil, err
		}
		if et == tArray {
			return nil, errors.New("nested arrays are not supported")
		}
		if _, ok := typeNames[et]; !ok {
			return nil, fmt.Errorf("array of unknown type %d", et)
		}
		n, err := r.u64()
		if err != nil {
			return nil, err
		}
		var out []any
		if n <= uint64(maxArray) {
			out = make([]any, 0, n)
		}
		for i := uint64(0); i < n; i++ {
			v, err := r.value(et, maxArray)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			if out != nil {
				out = append(out, v)
			}
		}
		if out == nil && n > 0 {
			return ArraySummary{Type: typeNames[et], Length: n}, nil
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown value type %d", typ)
}
