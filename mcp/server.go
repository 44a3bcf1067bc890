package mcp

import (
	"context"
	_ "embed"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"flow/runtime/job"
	"flow/runtime/journal"
	"flow/runtime/report"
)

// Runtime is what the server needs from flow's runtime. flow_run and
// flow_check are jobs of the runtime's one job system ([job.Gate]): a Start
// method returns the job at once, or an error matching [job.ErrBusy] while
// another job holds the workspace, which the server answers with a "busy"
// result. Status may be called at any time, also while a job is in
// progress, and must not wait for it.
type Runtime interface {
	// StartRun starts one task; the job's result is a report.Run. progress
	// receives one short human-readable line per runtime event; it may be
	// called from any goroutine until the job is done (later calls are
	// ignored). When ctx is cancelled the run stops with a "cancelled"
	// report.
	// runID is the run's id (the same for every line of one run).
	StartRun(ctx context.Context, task string, progress func(runID, message string)) (*job.Job[report.Run], error)
	// StartCheck starts the configured check called name, or every check
	// when name is ""; the job's result is a report.CheckReport.
	StartCheck(ctx context.Context, name string) (*job.Job[report.CheckReport], error)
	// Status reports flow's local state without contacting the model.
	Status(ctx context.Context) report.Status
}

// Options configure a [Server].
type Options struct {
	// Version is reported as serverInfo.version ("" means "dev").
	Version string
	// Logger receives the server's diagnostics and one "mcp.request" line
	// per request (level Info); nil discards them. Nothing is ever written
	// to stderr by the server itself.
	Logger *slog.Logger
	// Tasks is the workspace's durable task store. With it the server
	// speaks MCP's tasks utility, records every flow_run and flow_check
	// there (so results outlive the connection) and accepts wait_seconds,
	// idempotency_key and flow_status {run_id}; nil turns all that off.
	Tasks *journal.Tasks
	// ShortHostWait is the default wait_seconds of clients known to cut
	// tool calls at about 60 s ([ShortHosts]); 0 means 50 s.
	ShortHostWait time.Duration
	// TaskPageSize is the page size of tasks/list; 0 means 20.
	TaskPageSize int
	// Worker, with Tasks, returns the command of a worker process that runs
	// one task-augmented flow_run or flow_check (`flow task-worker` with
	// this server's configuration flags, doc/design.md §10.10); the server
	// sets its standard streams, fd 3 and session. nil runs tasks in this
	// process, where they end with it.
	Worker func() *exec.Cmd
	// WorkerStartTimeout bounds the wait for a worker to record its task;
	// 0 means a minute.
	WorkerStartTimeout time.Duration
	// Heartbeat is the longest silence of a flow_run or flow_check with a
	// progressToken: past it a progress notification says the job is still
	// at its latest step and for how long (a model call on a CPU takes
	// minutes, and idle watchdogs reset on progress); 0 means 10 s.
	Heartbeat time.Duration
}

// Server is flow's MCP server. It is safe to call [Server.Serve] more than
// once, also concurrently (each call is one session); the sessions share the
// runtime, hence its one-job-at-a-time rule.
type Server struct {
	rt      Runtime
	log     *slog.Logger
	version string
	tool    map[string]*toolDef

	tasks     *journal.Tasks
	shortWait time.Duration
	pageSize  int
	heartbeat time.Duration
	// workerCmd and workerStart: Options.Worker and WorkerStartTimeout.
	workerCmd   func() *exec.Cmd
	workerStart time.Duration
	liveMu      sync.Mutex
	live        map[string]*liveTask // tasks whose job this process runs or watches

	sessions atomic.Int64
}

//go:embed instructions.md
var instructions string

// Instructions returns the server-wide guidance sent to the model in the
// initialize result (mcp/instructions.md), for `flow serve -instructions`.
func Instructions() string { return strings.TrimSpace(instructions) }

// NewServer returns a server for rt.
func NewServer(rt Runtime, opts Options) *Server {
	s := &Server{rt: rt, log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.version = opts.Version
	if s.version == "" {
		s.version = "dev"
	}
	s.tasks, s.shortWait, s.pageSize, s.heartbeat = opts.Tasks, opts.ShortHostWait, opts.TaskPageSize, opts.Heartbeat
	if s.heartbeat <= 0 {
		s.heartbeat = 10 * time.Second
	}
	if s.shortWait <= 0 {
		s.shortWait = defaultShortHostWait
	}
	if s.pageSize <= 0 {
		s.pageSize = 20
	}
	if s.tasks != nil {
		s.workerCmd = opts.Worker
	}
	s.workerStart = opts.WorkerStartTimeout
	if s.workerStart <= 0 {
		s.workerStart = workerStartTimeout
	}
	s.live = make(map[string]*liveTask)
	s.tool = make(map[string]*toolDef)
	for _, def := range s.toolDefs() {
		s.tool[def.name] = def
	}
	return s
}

// Serve runs one MCP session: it reads frames from r and writes replies and
// notifications to w until the end of r, an oversized frame (after one
// -32700 reply) or a write error, and then returns nil, after the running
// flow_run or flow_check has returned (at the end of r it runs to its end,
// otherwise it is cancelled). When ctx is cancelled it
// cancels the running call, waits for it, writes nothing more and returns
// ctx.Err(). Another read error is returned wrapped.
//
// The goroutine reading r may stay blocked in r.Read after Serve returns
// because of ctx or a write error; it ends when r is closed.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.newSession(ctx, w).run(ctx, r)
}
