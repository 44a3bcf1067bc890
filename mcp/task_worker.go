package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/internal/text"
	"flow/runtime/job"
	"flow/runtime/journal"
)

// WorkerIO is what `flow task-worker` hands [RunWorker].
type WorkerIO struct {
	// Request is the worker's stdin: the call to run.
	Request io.Reader
	// Events is fd 3, the pipe to the server; writes to it may fail once
	// the server is gone.
	Events io.Writer
	// Signals delivers journal.CancelSignal (tasks/cancel) and the signals
	// that interrupt the worker (SIGTERM, SIGINT, SIGHUP).
	Signals <-chan os.Signal
}

// RunWorker is the body of `flow task-worker`: it reads the call, starts
// its job under the runtime's job system (which takes the workspace lock),
// records the task as this process's, hands the server the task, relays
// the job's events and writes its result to the record — exactly the tool
// result a plain call would have returned. A refusal (busy, invalid
// arguments) is recorded as a failed task. journal.CancelSignal cancels
// the job (the task ends cancelled); another signal interrupts it (failed,
// "interrupted"). It returns an error only when it could record nothing.
func RunWorker(rt Runtime, opts Options, wio WorkerIO) error {
	tw := &taskWorker{srv: NewServer(rt, opts), ev: newEventWriter(wio.Events)}
	defer tw.ev.close()
	if err := tw.read(wio.Request); err != nil {
		return err
	}
	j, lt, err := tw.start()
	if j == nil {
		return err
	}
	cancelled, interrupted := awaitSignals(j, wio.Signals)
	var res *mcp.CallToolResult
	if p := j.Panic(); p != nil {
		err = panicError(tw.def.name, p)
	} else {
		res, err = reportResult(withHunks(context.Background(), tw.srv.rt, j))
	}
	tw.srv.finishTask(lt, res, err, cancelled, interrupted)
	return nil
}

// taskWorker is the one call a worker process runs.
type taskWorker struct {
	srv *Server
	ev  *eventWriter
	req workerRequest
	def *toolDef
	ttl time.Duration
}

// read reads the call from the server and checks that it is a task here;
// when it is not, the handshake says why.
func (tw *taskWorker) read(r io.Reader) error {
	if err := json.NewDecoder(io.LimitReader(r, 4*MaxFrameBytes)).Decode(&tw.req); err != nil {
		tw.ev.handshake(workerEvent{Error: "unreadable request: " + err.Error()})
		return fmt.Errorf("read the task request: %w", err)
	}
	tw.def = tw.srv.tools.byName[tw.req.Tool]
	if tw.srv.tasks == nil || tw.def == nil || !tw.def.task {
		tw.ev.handshake(workerEvent{Error: "cannot run " + text.ClipBytes(tw.req.Tool, 64) + " as a task here (no task store, or not a task tool)"})
		return fmt.Errorf("cannot run %q as a task", tw.req.Tool)
	}
	tw.ttl = time.Duration(tw.req.TTLMillis) * time.Millisecond
	return nil
}

// start validates the call, records its task (before the job can change
// anything) and starts its job, and hands the server the task. A call that
// does not run — invalid, its key's task recorded by another process
// meanwhile, refused by the runtime — returns no job.
func (tw *taskWorker) start() (*job.Handle, *liveTask, error) {
	s, req, def := tw.srv, tw.req, tw.def
	tc, invalid, perr := def.parse(req.Arguments)
	if perr != nil {
		invalid = perr.message
	}
	if invalid != "" {
		task, err := s.failedTask(def.name, req.Arguments, tw.ttl, errorResult(invalid), req.TaskID)
		return nil, nil, tw.handOver(task, err)
	}
	lt := &liveTask{tool: def.name, progress: func(string) {}}
	task, err := s.record(lt, def.name, req.Arguments, tw.ttl, req.IdempotencyKey, req.TaskID)
	if errors.Is(err, errResubmitted) {
		return nil, nil, tw.handOver(task, nil)
	}
	if err != nil {
		return nil, nil, tw.handOver(task, err)
	}
	j, err := tc.start(context.Background(), func(runID, message string) {
		tw.ev.send(workerEvent{RunID: runID, Message: message})
		lt.event(runID, message)
	})
	if err != nil {
		task, err := s.unstarted(lt, refusedResult(err), true)
		return nil, nil, tw.handOver(task, err)
	}
	tw.ev.handshake(workerEvent{Task: &task})
	return j, lt, nil
}

// handOver sends the server the task of a call that does not run, or,
// when err says it could not be recorded, why; it returns err.
func (tw *taskWorker) handOver(task journal.Task, err error) error {
	if err != nil {
		tw.ev.handshake(workerEvent{Error: "cannot record the task: " + err.Error()})
		return err
	}
	tw.ev.handshake(workerEvent{Task: &task})
	return nil
}

// awaitSignals waits for j to end, cancelling it on a signal:
// journal.CancelSignal (tasks/cancel) cancels it, unless an interruption
// came first; any other signal interrupts it, and interrupted says so.
func awaitSignals(j *job.Handle, sigs <-chan os.Signal) (cancelled bool, interrupted string) {
	for {
		select {
		case <-j.Done():
			return cancelled, interrupted
		case sig := <-sigs:
			if sig == journal.CancelSignal {
				cancelled = interrupted == ""
			} else if interrupted == "" {
				cancelled = false
				interrupted = journal.WorkerGone(os.Getpid(), "was stopped by "+signalLabel(sig), "")
			}
			j.Cancel()
		}
	}
}

// eventWriter sends a worker's events to the server without ever
// blocking the job: the handshake goes first (the job's events may come
// before it and wait), a full buffer drops progress (the record has it),
// and a write error (the server is gone) ends the sending.
type eventWriter struct {
	first chan []byte // the handshake
	lines chan []byte
	done  chan struct{}
}

func newEventWriter(w io.Writer) *eventWriter {
	e := &eventWriter{first: make(chan []byte, 1), lines: make(chan []byte, 256), done: make(chan struct{})}
	go func() {
		defer close(e.done)
		_, err := w.Write(<-e.first)
		broken := err != nil
		for line := range e.lines {
			if !broken {
				_, err := w.Write(line)
				broken = err != nil
			}
		}
	}()
	return e
}

// encode is one event's line.
func (e *eventWriter) encode(ev workerEvent) []byte {
	ev.Message = text.ClipBytes(ev.Message, maxProgressBytes)
	b, _ := json.Marshal(ev)
	return append(b, '\n')
}

// handshake sends the first line: the task, or why there is none. It is
// called once.
func (e *eventWriter) handshake(ev workerEvent) { e.first <- e.encode(ev) }

// send queues one runtime event, or drops it when the queue is full.
func (e *eventWriter) send(ev workerEvent) {
	select {
	case e.lines <- e.encode(ev):
	default:
	}
}

// close flushes the queued events, for at most a second: a server that
// stopped reading without closing its end must not hold the worker.
func (e *eventWriter) close() {
	select {
	case e.first <- nil: // no handshake was sent: write nothing
	default:
	}
	close(e.lines)
	select {
	case <-e.done:
	case <-time.After(time.Second):
	}
}

// WorkerStartFailed tells the server, on events, that the worker could not
// start its task (its configuration or workspace would not open): the
// server answers the call with err.
func WorkerStartFailed(events io.Writer, err error) {
	ev := newEventWriter(events)
	ev.handshake(workerEvent{Error: err.Error()})
	ev.close()
}
