package tools

import "bytes"

// finder looks for a literal by its rarest byte: bytes.IndexByte runs
// far ahead of bytes.Index on text where the literal's first byte is
// common ("c" of "ctx.Err()"), and a rare byte has few false candidates.
type finder struct {
	lit  []byte
	rare byte // the byte of lit least common in source text
	off  int  // its offset in lit
}

func newFinder(lit []byte) *finder {
	f := &finder{lit: lit}
	best := 256
	for i, c := range lit {
		if r := int(byteRank[c]); r < best {
			best, f.rare, f.off = r, c, i
		}
	}
	return f
}

// index returns the offset of the first lit in data, or -1. When the rare
// byte turns out common in data, it hands over to bytes.Index.
func (f *finder) index(data []byte) int {
	n := len(f.lit)
	misses := 0
	for pos := 0; pos+n <= len(data); {
		i := bytes.IndexByte(data[pos+f.off:len(data)-n+f.off+1], f.rare)
		if i < 0 {
			return -1
		}
		start := pos + i
		if bytes.Equal(data[start:start+n], f.lit) {
			return start
		}
		pos = start + 1
		if misses++; misses > 32+pos>>5 {
			if j := bytes.Index(data[pos:], f.lit); j >= 0 {
				return pos + j
			}
			return -1
		}
	}
	return -1
}

// byteRank orders bytes by how common they are in source code and prose,
// from 0 (rare: control bytes, most punctuation, non-ASCII) up; an
// approximate order is all a prefilter needs.
var byteRank = func() (r [256]uint8) {
	// From least to most common.
	order := "`~^|\\@$%#!?&*+<>[]QZXJKVWYUGHOBPFMNLDCRIETSAqzjxkvwybgpfmuclhdrsnioate0123456789:;'-/=,\"{}()_.\t\n "
	for i := 0; i < len(order); i++ {
		r[order[i]] = uint8(16 + i)
	}
	return r
}()
