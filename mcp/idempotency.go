package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"flow/internal/text"
	"flow/runtime/journal"
)

// The idempotency key (doc/design.md §10.11): a flow_run's idempotency_key
// names one submission in the workspace, so that submitting it again gets
// the first submission instead of another run.

// resubmission is the step of a tools/call whose tool declares an
// idempotency key: a key that names an earlier submission is answered
// here ([session.resubmitted]); any other call goes on.
func (ss *session) resubmission(rq *toolRequest, next func(*toolRequest)) {
	if ss.srv.tasks != nil && rq.call.idempotencyKey != "" && ss.resubmitted(rq) {
		return
	}
	next(rq)
}

// resubmitted answers a call whose idempotency key names an earlier
// submission, and reports whether it did. The same tool with the same
// arguments (wait_seconds aside: it says how long to wait, not what to do)
// is a repeat: a task-augmented call gets that task, a plain one its
// result (waited for as a plain call waits, rq.wait long). Anything else
// reuses the key for another submission, which is refused with an error
// result, as payment APIs refuse it: returning the first submission's
// result would silently drop the second.
func (ss *session) resubmitted(rq *toolRequest) bool {
	key, tool := rq.call.idempotencyKey, rq.def.name
	t, ok, err := ss.srv.tasks.ByKey(key)
	if err != nil || !ok {
		return false
	}
	if !sameSubmission(t, tool, rq.params.arguments) {
		ss.log.Info("idempotency key reused", "tool", tool, "task", t.ID)
		ss.refuse(rq, errorResult(keyReused(key, t)))
		return true
	}
	ss.log.Info("idempotent resubmission", "tool", tool, "task", t.ID)
	switch {
	case rq.params.task != nil:
		ss.result(rq.id, createTaskResult{Task: ss.srv.wireTask(t)})
	case t.Terminal():
		rq.reply(storedResult(t), nil)
	default:
		ss.calls.Add(1)
		go ss.awaitSubmission(rq, t)
	}
	return true
}

// awaitSubmission answers a plain repeat of the submission t, still
// running, with its result once it ends, or after rq.wait with its
// progress; it runs as one of the session's calls.
func (ss *session) awaitSubmission(rq *toolRequest, t journal.Task) {
	defer ss.calls.Done()
	ctx, cancel := ss.base, func() {}
	if rq.wait > 0 {
		ctx, cancel = context.WithTimeout(ss.base, rq.wait)
	}
	defer cancel()
	done, err := ss.srv.tasks.Wait(ctx, t.ID, taskPollInterval)
	switch {
	case ss.out.isShut() || ss.base.Err() != nil:
	case err == nil:
		rq.reply(storedResult(done), nil)
	default:
		rq.reply(ss.srv.runningTask(done), nil)
	}
}

// sameSubmission reports whether a call of tool with args repeats the
// submission t: the same tool and the same arguments, compared as JSON
// values, without wait_seconds and with "" standing for an absent string
// (an empty check name, like none, means every check).
func sameSubmission(t journal.Task, tool string, args json.RawMessage) bool {
	return t.Tool == tool && reflect.DeepEqual(submission(t.Arguments), submission(args))
}

// submission decodes arguments for [sameSubmission].
func submission(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal(raw, &m)
	for k, v := range m {
		if k == "wait_seconds" || v == "" {
			delete(m, k)
		}
	}
	return m
}

// keyReused is the error of a submission that reuses another's key.
func keyReused(key string, first journal.Task) string {
	args := submission(first.Arguments)
	delete(args, "idempotency_key")
	what, _ := json.Marshal(args)
	return fmt.Sprintf("idempotency_key %s was already used for another submission (%s %s, task %s, %s); use a new key for a new submission, or repeat that one's arguments exactly to get its result",
		strconv.Quote(text.ClipBytes(key, 80)), first.Tool, text.ClipBytes(string(what), 200), first.ID, first.CreatedAt.UTC().Format(time.RFC3339))
}
