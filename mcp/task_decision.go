package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"flow/runtime/journal"
	"flow/runtime/report"
)

// The question after an unverified run, for a task (doc/design.md §10.12):
// a task-augmented flow_run runs in a worker process that cannot ask, so
// the session that collects its result with tasks/result asks instead,
// when its client declared form-mode elicitation, before it answers. The
// answer is applied through Review as after a plain run, and the result
// with its decision is kept beside the task's record, as the record of a
// finished task never changes, so that the question is asked at most once
// per task and every later tasks/result shows the same decision.

// decisionSuffix names the file beside a task's record that holds its
// result with the decision: <id>.decision, created empty (exclusively)
// when a session is about to ask, and replaced atomically by the decided
// result once the answer is applied.
const decisionSuffix = ".decision"

// taskDecision returns task, a finished task about to be answered by
// tasks/result, with its result as it is to be sent: the decided result
// when a session asked about it already; else, when the client declared
// form-mode elicitation and the result is a run report that left an
// unverified change whose hunks are still pending, the result after the
// question, which it asks for at most as long as ctx lasts (and the
// server's decision timeout). A client without form-mode elicitation is
// never asked, and neither is one whose run's workspace is held by a job:
// its result then says so in its decision, and nothing is kept.
func (ss *session) taskDecision(ctx context.Context, task journal.Task) journal.Task {
	if task.Tool != "flow_run" || len(task.Result) == 0 {
		return task
	}
	path := ss.srv.decisionPath(task.ID)
	if b, err := os.ReadFile(path); err == nil {
		// Decided, or being asked in another session (empty): that
		// session answers with the decision.
		if len(b) > 0 {
			task.Result = b
		}
		return task
	}
	if !ss.elicit || ss.out.isShut() || ss.peer.ended() || ctx.Err() != nil {
		return task
	}
	stored, run, ok := undecidedRun(task)
	if !ok {
		return task
	}
	// The same listing the plain path adds to a run's result, now: a
	// flow_review since may have decided the hunks, and a job holding the
	// workspace leaves nothing to ask about until it ends.
	rv, err := ss.srv.rt.Review(ctx, run.RunID, nil, nil)
	switch {
	case err != nil:
		return task
	case rv.Status == report.StatusBusy:
		run.Hunks = nil
		run.Decision = &runDecision{Answer: answerNone, Status: report.StatusBusy, Message: fmt.Sprintf(
			"Not asked: another job holds the workspace, so the change stays pending; tasks/result asks again once it is free, and flow_review {\"run_id\": %q} keeps or reverts it.", run.RunID)}
		return withDecision(task, stored, run, false)
	case rv.Status != report.StatusOK:
		return task
	}
	run.Hunks = rv.Hunks
	if !needsDecision(run) {
		return task
	}
	claim, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		// Another session asks, or asked and could not keep the answer.
		return task
	}
	claim.Close()
	decided, _ := ss.askDecision(ctx, run, func(string) {}).(runWithHunks)
	if decided.Decision == nil {
		// Not asked after all (the request or the session ended first).
		os.Remove(path)
		return task
	}
	task = withDecision(task, stored, decided, true)
	if err := ss.srv.keepDecision(path, task.Result); err != nil {
		ss.log.Warn("task decision not kept", "task", task.ID, "error", err.Error())
	}
	return task
}

// undecidedRun reads task's stored result as a run report that left a
// change flow did not verify and nobody decided about; ok is false for
// any other result.
func undecidedRun(task journal.Task) (stored wireToolResult, run runWithHunks, ok bool) {
	if json.Unmarshal(task.Result, &stored) != nil || json.Unmarshal(stored.StructuredContent, &run) != nil {
		return stored, run, false
	}
	return stored, run, run.Decision == nil && !run.Verified && run.RunID != "" && len(run.ChangedFiles) > 0
}

// withDecision returns task with its stored result changed to carry run's
// hunks, decision and, when the decision applied a review, the review: the
// rest of the stored report is kept as the worker wrote it, and the result
// is rebuilt from it as the plain call's would be (isError as stored).
func withDecision(task journal.Task, stored wireToolResult, run runWithHunks, reviewed bool) journal.Task {
	members, ok := orderedMembers(stored.StructuredContent)
	if !ok {
		return task
	}
	set := func(k string, v any) {
		b, err := report.Marshal(v)
		if err != nil {
			return
		}
		for i := range members {
			if members[i].key == k {
				members[i].value = b
				return
			}
		}
		members = append(members, member{k, b})
	}
	if reviewed && run.Review != nil {
		set("review", run.Review)
	}
	if len(run.Hunks) > 0 {
		set("hunks", run.Hunks)
	}
	set("decision", run.Decision)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := report.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	if raw, err := toolResultJSON(structuredResult(b.Bytes(), stored.IsError)); err == nil {
		task.Result = raw
	}
	return task
}

// member is one top-level member of a JSON object.
type member struct {
	key   string
	value json.RawMessage
}

// orderedMembers splits a JSON object into its members, in their order,
// so that a report keeps its shape when members are set.
func orderedMembers(raw json.RawMessage) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return nil, false
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, false
		}
		out = append(out, member{key, v})
	}
	return out, true
}

// decisionPath is the path of the file that keeps task id's decided
// result, beside its record.
func (r *taskRecords) decisionPath(id string) string {
	return filepath.Join(filepath.Dir(r.tasks.LogPath(id)), id+decisionSuffix)
}

// keepDecision replaces the claim at path with the decided result, written
// atomically, and removes the decision files of records that are gone.
func (r *taskRecords) keepDecision(path string, result json.RawMessage) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".decision-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(result)
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	r.pruneDecisions(filepath.Dir(path))
	return nil
}

// pruneDecisions removes the decision files whose task record is gone
// (expired or evicted): the task store knows nothing of them.
func (r *taskRecords) pruneDecisions(dir string) {
	names, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range names {
		id, ok := strings.CutSuffix(e.Name(), decisionSuffix)
		if !ok {
			continue
		}
		if _, err := r.tasks.Task(id); errors.Is(err, journal.ErrTaskNotFound) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
