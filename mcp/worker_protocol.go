package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"syscall"

	"flow/runtime/journal"
)

// A task-augmented flow_run or flow_check runs in a worker process of its
// own (doc/design.md §10.10), so that the task outlives the server and its
// client: `flow task-worker`, started by the server in a session of its
// own, with its stderr in the task's log. worker.go is the server's side,
// task_worker.go the worker's; the two talk through pipes:
//
//   - stdin: one workerRequest, the validated call;
//   - fd 3: workerEvent lines, first the handshake (the task the worker
//     recorded, or why it could not), then one per runtime event.
//
// The worker takes the workspace lock, records the task as its own and
// writes its events and its result there; the server relays the events to
// its client while it lives, and the next server reads the record. Closing
// stdin, SIGTERM or SIGKILL of the server does not reach the worker;
// journal.CancelSignal is tasks/cancel.

// workerRequest is what the server asks a worker to run.
type workerRequest struct {
	TaskID         string          `json:"task_id"`
	Tool           string          `json:"tool"`
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	TTLMillis      int64           `json:"ttl_ms,omitempty"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
}

// workerEvent is one line from a worker: the handshake (Task or Error)
// or a runtime event.
type workerEvent struct {
	Task    *journal.Task `json:"task,omitempty"`
	Error   string        `json:"error,omitempty"`
	RunID   string        `json:"run_id,omitempty"`
	Message string        `json:"message,omitempty"`
}

// signalName is SIGKILL for syscall.SIGKILL.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	}
	return fmt.Sprintf("%d (%s)", int(sig), sig)
}

// signalLabel names a signal for a task message.
func signalLabel(sig os.Signal) string {
	if ss, ok := sig.(syscall.Signal); ok {
		return signalName(ss)
	}
	return sig.String()
}
