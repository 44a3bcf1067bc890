package journal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"flow/internal/text"
)

// Task statuses, as MCP's tasks utility names them.
const (
	TaskWorking   = "working"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
)

// Task bounds.
const (
	// DefaultTaskTTL is how long a task's record is kept after it was
	// created when the requestor asks for no ttl.
	DefaultTaskTTL = 24 * time.Hour
	// MaxTaskTTL caps a requested ttl.
	MaxTaskTTL = 7 * 24 * time.Hour
	// MaxTasks bounds the finished records kept per workspace, the
	// oldest going first; working ones are always kept, so a record that
	// is written and then discarded (a call refused as busy) evicts none.
	MaxTasks = 200
)

// ErrTaskNotFound reports an unknown or expired task id.
var ErrTaskNotFound = errors.New("task not found")

// Task is the durable record of one long-running tool call: what was asked,
// where it stands, and once finished the exact result a plain call would have
// returned. The record is independent of the wire: the MCP server maps it to
// its tasks utility.
type Task struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Status    string          `json:"status"`
	// Message is the latest human-readable status, from the runtime's
	// latest event while working, or why the task ended.
	Message   string    `json:"message,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// TTL is how long the record is kept after CreatedAt.
	TTL time.Duration `json:"ttl_ns"`
	// Version grows by one with every change, so a watcher can tell news
	// from a repeat.
	Version int64 `json:"version"`
	// RunID is the run's id once the runtime has started it.
	RunID string `json:"run_id,omitempty"`
	// IdempotencyKey, when set, makes a second submission with the same key
	// return this task.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Result is the tool result (any JSON), set with a terminal status.
	Result json.RawMessage `json:"result,omitempty"`
	// Owner identifies the process running the task: a working task whose
	// owner is gone was interrupted.
	Owner Owner `json:"owner"`
	// Worker says that the owner is a worker process of its own (`flow
	// task-worker`), which outlives the server that started it and stops
	// the task when it is sent [CancelSignal]; otherwise the owner is the
	// server itself.
	Worker bool `json:"worker,omitempty"`
}

// Terminal reports whether the task has ended.
func (t Task) Terminal() bool { return t.Status != TaskWorking }

// Expired reports whether the record's ttl has passed at now.
func (t Task) Expired(now time.Time) bool { return now.After(t.CreatedAt.Add(t.TTL)) }

// Tasks is the task store of one workspace, under its state directory
// beside the run history. Any number of processes may use it at once: each
// task is one file written atomically, and only the owning process changes a
// working task (others may mark it interrupted once the owner is gone).
type Tasks struct {
	dir  string
	self Owner
	now  func() time.Time

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change in this process
	// children are the worker processes this process started and waits
	// for: it records how they end itself ([Tasks.WorkerEnded]), so a
	// reader here never guesses while one is dead but not yet reaped.
	children map[Owner]bool
}

const tasksDir = "tasks"

// taskIDPattern is the shape of ids this store makes: 32 hex digits.
var taskIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// Tasks opens the workspace's task store and marks the working tasks of
// processes that are gone as failed ("interrupted").
func (s *Store) Tasks() (*Tasks, error) {
	dir := filepath.Join(s.dir, tasksDir)
	if err := mkdirPrivate(dir); err != nil {
		return nil, fmt.Errorf("journal: task store: %w", err)
	}
	t := &Tasks{dir: dir, self: selfOwner(), now: time.Now, changed: make(chan struct{})}
	t.recover()
	return t, nil
}

// NewTask records a new working task owned by this process. With a
// non-empty key, an existing unexpired task with the same key is returned
// instead (created is then false).
func (t *Tasks) NewTask(tool string, args json.RawMessage, ttl time.Duration, key string) (task Task, created bool, err error) {
	id, err := NewTaskID()
	if err != nil {
		return Task{}, false, err
	}
	return t.newTask(Task{ID: id, Tool: tool, Arguments: args, TTL: ttl, IdempotencyKey: key})
}

// NewWorkerTask records the new working task id (from [NewTaskID]) owned
// by this process, a worker of its own that runs it (Task.Worker). With a
// non-empty key, an existing unexpired task with the same key is returned
// instead (created is then false).
func (t *Tasks) NewWorkerTask(id, tool string, args json.RawMessage, ttl time.Duration, key string) (task Task, created bool, err error) {
	if !taskIDPattern.MatchString(id) {
		return Task{}, false, fmt.Errorf("journal: task id %s: %w", strconv.Quote(text.Clip(id, 64)), ErrTaskNotFound)
	}
	return t.newTask(Task{ID: id, Tool: tool, Arguments: args, TTL: ttl, IdempotencyKey: key, Worker: true})
}

func (t *Tasks) newTask(task Task) (Task, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if task.IdempotencyKey != "" {
		all, err := t.all()
		if err != nil {
			return Task{}, false, err
		}
		for _, old := range all {
			if old.IdempotencyKey == task.IdempotencyKey && old.Tool == task.Tool {
				return old, false, nil
			}
		}
	}
	if task.TTL <= 0 {
		task.TTL = DefaultTaskTTL
	}
	task.TTL = min(task.TTL, MaxTaskTTL)
	now := t.now().UTC()
	task.Status, task.CreatedAt, task.UpdatedAt, task.Version, task.Owner = TaskWorking, now, now, 1, t.self
	if err := t.save(task); err != nil {
		return Task{}, false, err
	}
	t.prune()
	return task, true, nil
}

// Update changes a task of this store. A terminal task never changes again:
// the update is refused with the task as it stands.
func (t *Tasks) Update(id string, change func(*Task)) (Task, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	task, err := t.load(id)
	if err != nil {
		return Task{}, err
	}
	if task.Terminal() {
		return task, nil
	}
	change(&task)
	task.ID = id
	task.Version++
	task.UpdatedAt = t.now().UTC()
	if err := t.save(task); err != nil {
		return Task{}, err
	}
	return task, nil
}

// Discard removes the record of a job that never started: a plain call
// recorded before its job, which then refused to start (busy, say), is
// answered and not listed. Only a working task of this process can be
// discarded; any other is left as it is and reported.
func (t *Tasks) Discard(id string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	task, err := t.load(id)
	if err != nil {
		return err
	}
	if task.Terminal() || task.Owner != t.self {
		return fmt.Errorf("journal: task %s is %s, owned by process %d: not discarded", id, task.Status, task.Owner.PID)
	}
	t.remove(id)
	close(t.changed)
	t.changed = make(chan struct{})
	return syncDir(t.dir)
}

// Task returns one task. An expired or unknown id is [ErrTaskNotFound]; a
// working task whose owner is gone is reported (and recorded) as failed.
func (t *Tasks) Task(id string) (Task, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	task, err := t.load(id)
	if err != nil {
		return Task{}, err
	}
	return t.checkOwner(task), nil
}

// List returns the unexpired tasks, newest first, from the cursor on (""
// for the start), at most limit of them, and the cursor of the next page
// ("" when there is none). A cursor is the id of the last task of the
// previous page.
func (t *Tasks) List(cursor string, limit int) ([]Task, string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	all, err := t.all()
	if err != nil {
		return nil, "", err
	}
	start := 0
	if cursor != "" {
		start = -1
		for i, task := range all {
			if task.ID == cursor {
				start = i + 1
				break
			}
		}
		if start < 0 {
			return nil, "", fmt.Errorf("%w: cursor %s", ErrTaskNotFound, cursor)
		}
	}
	end := min(start+max(limit, 1), len(all))
	page := make([]Task, 0, end-start)
	for _, task := range all[start:end] {
		page = append(page, t.checkOwner(task))
	}
	next := ""
	if end < len(all) {
		next = all[end-1].ID
	}
	return page, next, nil
}

// Wait returns the task once it is terminal, or when ctx ends. Changes made
// in this process wake it at once; a task owned by another process is
// polled every poll.
func (t *Tasks) Wait(ctx context.Context, id string, poll time.Duration) (Task, error) {
	for {
		t.mu.Lock()
		changed := t.changed
		task, err := t.load(id)
		if err == nil {
			task = t.checkOwner(task)
		}
		t.mu.Unlock()
		if err != nil || task.Terminal() {
			return task, err
		}
		var tick <-chan time.Time
		var timer *time.Timer
		if task.Owner != t.self {
			timer = time.NewTimer(poll)
			tick = timer.C
		}
		select {
		case <-ctx.Done():
		case <-changed:
		case <-tick:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return task, ctx.Err()
		}
	}
}

// all returns every unexpired task, newest first.
func (t *Tasks) all() ([]Task, error) {
	names, err := os.ReadDir(t.dir)
	if err != nil {
		return nil, fmt.Errorf("journal: task store: %w", err)
	}
	now := t.now()
	var out []Task
	for _, e := range names {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !taskIDPattern.MatchString(id) {
			continue
		}
		task, err := t.read(id)
		if err != nil || task.Expired(now) {
			continue
		}
		out = append(out, task)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

func (t *Tasks) load(id string) (Task, error) {
	if !taskIDPattern.MatchString(id) {
		return Task{}, fmt.Errorf("%w: %s", ErrTaskNotFound, strconv.Quote(text.Clip(id, 64)))
	}
	task, err := t.read(id)
	if errors.Is(err, os.ErrNotExist) || (err == nil && task.Expired(t.now())) {
		return Task{}, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	return task, err
}

func (t *Tasks) read(id string) (Task, error) {
	b, err := os.ReadFile(filepath.Join(t.dir, id+".json"))
	if err != nil {
		return Task{}, err
	}
	var task Task
	if err := json.Unmarshal(b, &task); err != nil {
		return Task{}, fmt.Errorf("journal: task %s: %w", id, err)
	}
	return task, nil
}

func (t *Tasks) save(task Task) error {
	b, err := json.Marshal(task)
	if err != nil {
		return err
	}
	if err := writeAtomic(t.dir, task.ID+".json", b); err != nil {
		return fmt.Errorf("journal: task %s: %w", task.ID, err)
	}
	close(t.changed)
	t.changed = make(chan struct{})
	return nil
}

// checkOwner turns a working task whose owner is gone into a failed one
// and records that. The caller holds t.mu.
func (t *Tasks) checkOwner(task Task) Task {
	if task.Terminal() || task.Owner == t.self || t.children[task.Owner] || task.Owner.Alive() {
		return task
	}
	task.Status = TaskFailed
	task.Message = t.ownerGone(task)
	task.Version++
	task.UpdatedAt = t.now().UTC()
	_ = t.save(task) // a read-only state directory still answers truthfully
	return task
}

// ownerGone says why a working task whose owner is gone failed: its
// server stopped, or its worker ended before the task did, with the last
// words of the worker's log when it left any.
func (t *Tasks) ownerGone(task Task) string {
	if !task.Worker {
		return "interrupted: the flow server running this task stopped before it finished; its edits are in the journal (flow undo reverts them)"
	}
	return WorkerGone(task.Owner.PID, "ended (it was killed, crashed, or the machine restarted)", t.LogTail(task.ID))
}

// Adopt marks owner as a worker process this process started and will
// wait for; [Tasks.WorkerEnded] ends the adoption.
func (t *Tasks) Adopt(owner Owner) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.children == nil {
		t.children = map[Owner]bool{}
	}
	t.children[owner] = true
}

// WorkerEnded records that the worker process of task id ended: a task
// it left working fails with message, and so does one that a reader
// already failed because the worker was gone (its message was a guess;
// message, from the worker's parent, knows how it ended). A task the
// worker ended itself is left as it is.
func (t *Tasks) WorkerEnded(id, message string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	task, err := t.load(id)
	if err != nil {
		return err
	}
	delete(t.children, task.Owner)
	if task.Terminal() && (task.Status != TaskFailed || task.Message != t.ownerGone(task)) {
		return nil
	}
	task.Status, task.Message = TaskFailed, message
	task.Version++
	task.UpdatedAt = t.now().UTC()
	return t.save(task)
}

// WorkerGone is the message of a task whose worker process pid ended
// before the task did: how it ended, its last words (a line of its log,
// "" for none) and what remains.
func WorkerGone(pid int, how, lastWords string) string {
	msg := fmt.Sprintf("interrupted: the task's worker process %d %s before the task finished", pid, how)
	if lastWords != "" {
		msg += "; its log says: " + lastWords
	}
	return msg + "; its edits are in the journal (flow undo reverts them)"
}

// recover marks interrupted tasks at open.
func (t *Tasks) recover() {
	t.mu.Lock()
	defer t.mu.Unlock()
	all, err := t.all()
	if err != nil {
		return
	}
	for _, task := range all {
		t.checkOwner(task)
	}
}

// prune removes expired records and, past MaxTasks finished ones, the
// oldest finished, each with its worker log, and logs left without a
// record. The caller holds t.mu.
func (t *Tasks) prune() {
	names, err := os.ReadDir(t.dir)
	if err != nil {
		return
	}
	defer t.pruneLogs(names)
	now := t.now()
	var finished []Task
	for _, e := range names {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !taskIDPattern.MatchString(id) {
			continue
		}
		task, err := t.read(id)
		if err != nil {
			continue
		}
		switch {
		case task.Expired(now):
			t.remove(id)
		case task.Terminal():
			finished = append(finished, task)
		}
	}
	if len(finished) <= MaxTasks {
		return
	}
	sort.Slice(finished, func(i, j int) bool { return finished[i].CreatedAt.Before(finished[j].CreatedAt) })
	for _, task := range finished[:len(finished)-MaxTasks] {
		t.remove(task.ID)
	}
}

// remove deletes a record and its worker log.
func (t *Tasks) remove(id string) {
	os.Remove(filepath.Join(t.dir, id+".json"))
	os.Remove(t.LogPath(id))
}

// NewTaskID returns a new task id: 128 random bits in hex.
func NewTaskID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("journal: task id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// ByKey returns the first unexpired task submitted with the idempotency
// key, whatever its tool, if there is one: a key names one submission in a
// workspace, and its caller decides whether a new one repeats it. An empty
// key matches nothing.
func (t *Tasks) ByKey(key string) (Task, bool, error) {
	if key == "" {
		return Task{}, false, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	all, err := t.all()
	if err != nil {
		return Task{}, false, err
	}
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].IdempotencyKey == key {
			return t.checkOwner(all[i]), true, nil
		}
	}
	return Task{}, false, nil
}

// ByRun returns the unexpired task whose run has id runID, if there is one.
func (t *Tasks) ByRun(runID string) (Task, bool, error) {
	return t.find(func(task Task) bool { return runID != "" && task.RunID == runID })
}

func (t *Tasks) find(match func(Task) bool) (Task, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	all, err := t.all()
	if err != nil {
		return Task{}, false, err
	}
	for _, task := range all {
		if match(task) {
			return t.checkOwner(task), true, nil
		}
	}
	return Task{}, false, nil
}
