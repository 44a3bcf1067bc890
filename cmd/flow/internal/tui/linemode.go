package tui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"flow/runtime/job"
	"flow/runtime/report"
)

// maxLineBytes bounds one input line of the line mode.
const maxLineBytes = 1 << 20

// inputLine is one line read by the line mode.
type inputLine struct {
	text    string
	tooLong bool
	err     error // a read error other than end of input
}

// runLines is the line mode (stdin or stdout is not a terminal): it reads
// one command or task per line and writes exactly one compact JSON object
// per non-blank line, with no progress and no escape sequences. End of
// input and /quit return 0; a cancelled ctx returns 130 (the answer of a
// task that was running is still written: it lists the edits that remain).
func runLines(ctx context.Context, rt Runtime, in io.Reader, out io.Writer) int {
	lines := make(chan inputLine)
	stop := make(chan struct{})
	defer close(stop)
	// The reader goroutine may stay blocked in Read after Run returns (a
	// terminal or pipe that never delivers); it exits with the process.
	go readLines(in, lines, stop)
	for {
		if ctx.Err() != nil {
			return ExitInterrupted
		}
		var l inputLine
		var ok bool
		select {
		case <-ctx.Done():
			return ExitInterrupted
		case l, ok = <-lines:
		}
		if !ok {
			return ExitOK
		}
		var answer any
		quit := false
		switch {
		case l.err != nil:
			answer = errorAnswer(fmt.Sprintf("read input: %v", l.err))
			quit = true
		case l.tooLong:
			answer = errorAnswer(fmt.Sprintf("input line longer than %d bytes", maxLineBytes))
		default:
			answer, quit = answerLine(ctx, rt, parseCommand(l.text))
		}
		if answer != nil {
			if err := writeJSON(out, answer); err != nil {
				return ExitFailure
			}
		}
		if ctx.Err() != nil {
			return ExitInterrupted
		}
		if quit {
			if l.err != nil {
				return ExitFailure
			}
			return ExitOK
		}
	}
}

// readLines sends the lines of in to lines and closes it at end of input.
// A line longer than maxLineBytes is reported as tooLong and skipped.
func readLines(in io.Reader, lines chan<- inputLine, stop <-chan struct{}) {
	defer close(lines)
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		var line []byte
		tooLong := false
		var err error
		for {
			var chunk []byte
			chunk, err = r.ReadSlice('\n')
			if !tooLong {
				if len(line)+len(chunk) > maxLineBytes+1 {
					tooLong, line = true, nil
				} else {
					line = append(line, chunk...)
				}
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if len(line) > 0 || tooLong {
			select {
			case lines <- inputLine{text: string(line), tooLong: tooLong}:
			case <-stop:
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				select {
				case lines <- inputLine{err: err}:
				case <-stop:
				}
			}
			return
		}
	}
}

// waitFor waits for a job started by the line mode and returns its report;
// a job the runtime refused is answered with its status and sentence, a
// job that panicked with an error answer.
func waitFor[R any](j *job.Job[R], err error) any {
	if err != nil {
		status := report.StatusError
		if errors.Is(err, job.ErrBusy) {
			status = report.StatusBusy
		}
		return map[string]any{"status": status, "error": err.Error()}
	}
	rep, _ := j.Result()
	if p := j.Panic(); p != nil {
		return errorAnswer(fmt.Sprintf("%s failed: internal error: %v", j.Kind, p))
	}
	return rep
}

// answerLine executes one command of the line mode and returns its JSON
// answer (nil for a blank line) and whether to quit.
func answerLine(ctx context.Context, rt Runtime, c command) (answer any, quit bool) {
	switch c.kind {
	case cmdEmpty:
		return nil, false
	case cmdQuit:
		return nil, true
	case cmdHelp, cmdClear:
		return map[string]any{"status": report.StatusOK, "commands": commandNames(), "note": msgHelpNote}, false
	case cmdStatus:
		return rt.Status(ctx), false
	case cmdCheck:
		return waitFor(rt.StartCheck(ctx, c.arg, nil)), false
	case cmdTools:
		names := rt.ToolNames()
		if names == nil {
			names = []string{}
		}
		return map[string]any{"status": report.StatusOK, "tools": names}, false
	case cmdModels:
		names, err := listModels(ctx, rt)
		if err != nil {
			return errorAnswer(err.Error()), false
		}
		return map[string]any{"status": report.StatusOK, "models": names}, false
	case cmdModel:
		name, err := resolveModel(ctx, rt, c.arg)
		if err != nil {
			return errorAnswer(err.Error()), false
		}
		if err := rt.SetModel(name); err != nil {
			return errorAnswer(err.Error()), false
		}
		return map[string]any{"status": report.StatusOK, "model": name}, false
	case cmdBuild:
		if c.arg == "" {
			return errorAnswer(msgBuildUsage), false
		}
		return waitFor(rt.StartRun(ctx, buildTask(c.arg), nil)), false
	case cmdTask:
		return waitFor(rt.StartRun(ctx, c.arg, nil)), false
	case cmdUndo:
		j, err := rt.StartUndo(ctx, c.arg)
		if errors.Is(err, ErrUndoUnavailable) {
			return map[string]any{"status": report.StatusUnavailable, "error": msgUndoUnavailable}, false
		}
		return waitFor(j, err), false
	case cmdReview:
		return answerReview(ctx, rt, c.arg), false
	case cmdLegacy:
		return map[string]any{"status": report.StatusUnavailable, "error": msgLegacy}, false
	}
	return errorAnswer(msgUnknown), false
}

// errorAnswer is the JSON answer of an error.
func errorAnswer(msg string) map[string]any {
	return map[string]any{"status": report.StatusError, "error": msg}
}

// writeJSON writes v as one compact JSON line.
func writeJSON(out io.Writer, v any) error {
	b, err := report.Marshal(v)
	if err != nil {
		b, _ = report.Marshal(errorAnswer(fmt.Sprintf("encode answer: %v", err)))
	}
	_, err = out.Write(append(b, '\n'))
	return err
}
