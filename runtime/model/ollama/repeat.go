package ollama

import "flow/runtime/model"

// A small model caught in a loop writes the same text again and again until
// its reply bound, and on a CPU that takes longer than a call's timeout: the
// call then fails after minutes with nothing to show. The clients watch the
// content as it streams and end the reply once its tail is one piece of text
// repeated, keeping the text before the loop and one copy of the piece.
const (
	// loopMaxPeriod is the longest repeated piece looked for, in bytes: a
	// whole-file coder's loop repeats a file and the text around it (1,044
	// bytes in one evaluation run, 14 times in ten minutes).
	loopMaxPeriod = 4096
	// loopMinSpan is the shortest repeated tail that ends a reply, in bytes.
	loopMinSpan = 1024
	// loopMinRepeats is how many copies of the piece the tail must hold, and
	// loopLongRepeats how many of a piece longer than loopLongPeriod: three
	// copies of over a kilobyte each are no answer's own text.
	loopMinRepeats  = 4
	loopLongPeriod  = 1024
	loopLongRepeats = 3
	// loopCheckEvery is how many new bytes of content pass between checks.
	loopCheckEvery = 64
)

// loopGuard checks a growing reply for a loop.
type loopGuard struct {
	checked int // the content length at the last check
}

// looping reports whether content, the whole reply so far, ends in a loop,
// and if so how many of its bytes to keep.
func (g *loopGuard) looping(content string) (keep int, ok bool) {
	if len(content)-g.checked < loopCheckEvery {
		return 0, false
	}
	g.checked = len(content)
	return repeatedTail(content)
}

// repeatedTail reports whether s ends in at least loopMinRepeats copies
// (loopLongRepeats of a piece over loopLongPeriod bytes) of one piece of at
// most loopMaxPeriod bytes that together span at least loopMinSpan bytes.
// keep is the length of s up to the end of the first copy of the
// repetition.
func repeatedTail(s string) (keep int, ok bool) {
	n := len(s)
	for p := 1; p <= loopMaxPeriod; p++ {
		repeats := loopMinRepeats
		if p > loopLongPeriod {
			repeats = loopLongRepeats
		}
		span := max(repeats*p, loopMinSpan)
		if span > n {
			if p <= loopLongPeriod {
				continue // fewer copies of a longer piece may fit
			}
			break // span only grows with p
		}
		if s[n-span+p:] != s[n-span:n-p] {
			continue
		}
		start := n - span
		for start > 0 && s[start-1] == s[start-1+p] {
			start--
		}
		return start + p, true
	}
	return 0, false
}

// cutLoop is resp with its content cut to keep bytes and the done reason
// that says why.
func cutLoop(resp model.Response, keep int) model.Response {
	resp.Message.Content = resp.Message.Content[:keep]
	resp.DoneReason = model.DoneRepetition
	return resp
}
