package mcp

import (
	_ "embed"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"flow/runtime/journal"
)

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
	// DecisionTimeout bounds the wait for the person's answer when a plain
	// flow_run asks whether to keep or revert an unverified change
	// (elicitation, doc/design.md §10.12); 0 means 10 minutes.
	DecisionTimeout time.Duration
}

// Server is flow's MCP server. It is safe to call [Server.Serve] more than
// once, also concurrently (each call is one session); the sessions share the
// runtime, hence its one-job-at-a-time rule, and the task records.
type Server struct {
	// taskRecords are the task store (Options.Tasks) and the tasks whose
	// job this process runs or watches.
	*taskRecords
	rt      Runtime
	log     *slog.Logger
	version string
	tools   *toolTable

	shortWait time.Duration
	pageSize  int
	heartbeat time.Duration
	// workerCmd and workerStart: Options.Worker and WorkerStartTimeout.
	workerCmd   func() *exec.Cmd
	workerStart time.Duration
	// decisionWait: Options.DecisionTimeout.
	decisionWait time.Duration

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
	s.taskRecords = newTaskRecords(opts.Tasks, s.log)
	s.shortWait, s.pageSize, s.heartbeat = opts.ShortHostWait, opts.TaskPageSize, opts.Heartbeat
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
	s.decisionWait = opts.DecisionTimeout
	if s.decisionWait <= 0 {
		s.decisionWait = defaultDecisionTimeout
	}
	s.tools = newToolTable(toolEnv{rt: rt, tasks: s.tasks != nil, runStatus: s.runStatus})
	return s
}

// workerStartTimeout bounds the wait for a worker's handshake when
// Options.WorkerStartTimeout is 0.
const workerStartTimeout = time.Minute

// defaultDecisionTimeout is how long a flow_run waits for the person's
// answer about an unverified change when Options.DecisionTimeout is 0.
const defaultDecisionTimeout = 10 * time.Minute

// defaultShortHostWait is the default wait_seconds of [ShortHosts].
const defaultShortHostWait = 50 * time.Second

// ShortHosts are the clientInfo.name values (compared case-insensitively)
// of hosts known to cut a tool call at about 60 s whatever the progress:
// Claude Desktop ("claude-ai", "claude-desktop") and the MCP Inspector
// ("mcp-inspector"), which uses the TypeScript SDK's 60 s default. A plain
// flow_run from them returns after 50 s with status "running" unless it
// passes wait_seconds (doc/design.md §10.11).
var ShortHosts = []string{"claude-ai", "claude-desktop", "mcp-inspector"}

// defaultWait is the default wait_seconds of a plain flow_run by client.
func (s *Server) defaultWait(client string) time.Duration {
	if s.tasks != nil && slices.Contains(ShortHosts, strings.ToLower(client)) {
		return s.shortWait
	}
	return 0
}
