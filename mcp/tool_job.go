package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/runtime/job"
)

// The last steps of a tools/call whose tool is a runtime job (flow_run,
// flow_check) that runs in this process: its record, written before the
// job starts (doc/design.md §10.10), the job's start, and the wait for its
// end on its own goroutine.

// recordJob is the step that gives a job call its progress and its live
// task and, with a task store, writes its record before the job can
// start. A submission another process recorded with the call's key since
// [session.resubmission] looked is answered as any resubmission is, and
// nothing starts; a record that cannot be written leaves the call plain.
func (ss *session) recordJob(rq *toolRequest, next func(*toolRequest)) {
	rq.job = &jobCall{id: rq.id, key: idKey(rq.id), tool: rq.def.name, token: rq.params.token, out: ss.out}
	rq.live = &liveTask{tool: rq.def.name, progress: rq.job.progress}
	if ss.srv.tasks == nil {
		next(rq)
		return
	}
	var ttl time.Duration
	if rq.params.task != nil {
		ttl = rq.params.task.ttl
	}
	task, err := ss.srv.record(rq.live, rq.def.name, rq.params.arguments, ttl, rq.call.idempotencyKey, "")
	if errors.Is(err, errResubmitted) && ss.resubmitted(rq) {
		return
	}
	if err != nil {
		ss.log.Warn("task not recorded", "tool", rq.def.name, "error", err.Error())
		rq.asTask = false
	}
	rq.task = task
	next(rq)
}

// startJob starts the job of a recorded call. One the runtime refuses
// (busy: another job holds the workspace) is answered at once; one that
// started is answered with its task at once or becomes the session's
// running call, and is waited for on its own goroutine.
func (ss *session) startJob(rq *toolRequest) {
	ctx, stop := context.WithCancel(ss.base)
	j, err := rq.call.start(ctx, rq.live.event)
	if err != nil {
		stop()
		ss.log.Info("tool call refused", "tool", rq.def.name, "id", string(rq.id), "reason", err.Error())
		ss.refuseUnstarted(rq, refusedResult(err))
		return
	}
	rq.job.stop = stop
	rq.live.started(j.Cancel)
	if rq.asTask {
		ss.result(rq.id, createTaskResult{Task: ss.srv.wireTask(rq.task)})
	} else {
		ss.setRunning(rq.job)
	}
	wait := rq.wait
	if rq.live.id == "" || rq.asTask {
		wait = 0 // without a record there is nothing to follow
	}
	go rq.job.heartbeat(ss.srv.heartbeat, j.Done())
	ss.calls.Add(1)
	go ss.awaitJob(ctx, rq, j, wait)
}

// refuseUnstarted answers a call whose job did not start with res, its
// refusal, and ends its record: a task's fails with it, a plain call's is
// discarded (doc/design.md §10.10).
func (ss *session) refuseUnstarted(rq *toolRequest, res *mcp.CallToolResult) {
	if rq.live.id == "" {
		ss.refuse(rq, res)
		return
	}
	task, err := ss.srv.unstarted(rq.live, res, rq.asTask)
	switch {
	case err != nil:
		ss.log.Warn("refused call's record not ended", "tool", rq.def.name, "task", rq.live.id, "error", err.Error())
		rq.reply(res, nil)
	case rq.asTask:
		ss.result(rq.id, createTaskResult{Task: ss.srv.wireTask(task)})
	default:
		rq.reply(res, nil)
	}
}

// awaitJob waits for a started job, whose context is ctx, and ends its
// call: after wait (0: none) a plain call answers "running" and the job
// goes on; at its end a plain call not yet answered may first ask the
// person about an unverified change (still cancellable meanwhile), then
// the record is written, a task's status notified, and that call gets the
// job's result, unless it was cancelled or the session interrupted. It
// runs as one of the session's calls.
func (ss *session) awaitJob(ctx context.Context, rq *toolRequest, j *job.Handle, wait time.Duration) {
	defer ss.calls.Done()
	c, lt := rq.job, rq.live
	replied := rq.asTask
	since := time.Now()
	if wait > 0 && !doneWithin(j, wait) {
		c.finish()
		ss.clearRunning(c)
		if !c.cancelled.Load() && !ss.out.isShut() {
			rq.reply(ss.srv.stillRunning(lt), nil)
		}
		replied = true
	}
	<-j.Done()
	c.finish()
	ask, done := questionContext(ctx, replied, wait, since)
	res, err := ss.jobResult(ask, rq, j)
	done()
	c.stop()
	ss.clearRunning(c)
	interrupted := ""
	if ss.out.isShut() {
		interrupted = serverStopped
	}
	ss.srv.finishTask(lt, res, err, c.cancelled.Load() || lt.cancelled.Load(), interrupted)
	if rq.asTask && ss.clientTasks && !ss.out.isShut() {
		ss.notifyTask(lt.id)
	}
	ss.srv.release(lt)
	switch {
	case replied:
	case c.cancelled.Load():
		ss.log.Info("response to a cancelled request not sent", "tool", c.tool, "id", string(c.id))
	case ss.out.isShut():
		ss.log.Info("response not sent: session interrupted", "tool", c.tool, "id", string(c.id))
	default:
		rq.reply(res, err)
	}
}

// questionContext is the context of the question a call may ask before
// its result (doc/design.md §10.12), or nil when it asks none: a call
// already answered asks nothing, and a call with a wait (0: none, counted
// from since) still answers within it.
func questionContext(ctx context.Context, replied bool, wait time.Duration, since time.Time) (context.Context, context.CancelFunc) {
	switch {
	case replied:
		return nil, func() {}
	case wait > 0:
		return context.WithDeadlineCause(ctx, since.Add(wait), fmt.Errorf("the call's wait of %s ran out", wait))
	}
	return ctx, func() {}
}

// doneWithin reports whether j ends within wait.
func doneWithin(j *job.Handle, wait time.Duration) bool {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-j.Done():
		return true
	case <-t.C:
		return false
	}
}

// jobResult is the tool result of rq's job, which has ended: its
// report's, or for a job that panicked the error answered for it
// (-32603). With ask set, a run that left an unverified change first asks
// the person about it, for at most as long as ask lasts (doc/design.md
// §10.12); its task's status message says so meanwhile.
func (ss *session) jobResult(ask context.Context, rq *toolRequest, j *job.Handle) (*mcp.CallToolResult, error) {
	if p := j.Panic(); p != nil {
		return nil, ss.recovered(rq.def.name, p)
	}
	rep, status := withHunks(context.Background(), ss.srv.rt, j)
	if ask != nil {
		rep = ss.askDecision(ask, rep, func(msg string) { rq.live.event("", msg) })
	}
	return reportResult(rep, status)
}
