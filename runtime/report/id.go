package report

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewRunID returns a fresh run id: the UTC start time and 8 random hex
// digits, such as "20260102T150405Z-1a2b3c4d". Ids sort by start time. It
// is the only run id generator: the id a user sees (and passes to `flow
// undo`) has this shape whether or not the journal is open.
func NewRunID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
