package report

// Run is the report of one task run (`flow run`, MCP `flow_run`,
// `:FlowBuild`, a TUI task): the reference's keys plus flow's extensions.
type Run struct {
	Status       string   `json:"status"`
	Verified     bool     `json:"verified"`
	Task         string   `json:"task"`
	RunID        string   `json:"run_id"`
	Workspace    string   `json:"workspace"`
	StartedAt    string   `json:"started_at"` // RFC 3339, UTC
	DurationMS   int64    `json:"duration_ms"`
	Roles        []Role   `json:"roles"`
	Events       []Event  `json:"events"`
	ChangedFiles []string `json:"changed_files"`
	// Diffs holds each changed file's unified diff, from its content before
	// the run to its content at the end, in ChangedFiles order; each is
	// bounded, and the list as a whole is bounded too (a cut file says
	// Truncated, files beyond the bound keep their counts with an empty
	// Diff).
	Diffs               []FileDiff     `json:"diffs"`
	Checks              []CheckResult  `json:"checks"`
	Verification        *Verification  `json:"verification"`
	VerificationHistory []Verification `json:"verification_history"`
	// Review is the person's review of the change, beside the host's
	// Verification and never part of it; nil until someone reviewed.
	Review *Review `json:"review,omitempty"`
	// Reviewer is what flow knows of the reviewer's judgement: its
	// measurement, or that it was never measured (doc/design.md §8.10);
	// nil in reports of older versions.
	Reviewer *ReviewerStanding `json:"reviewer,omitempty"`
	// Baseline are the required checks' results before the coder's first
	// edit, when they were measured (agent.baseline).
	Baseline []CheckResult `json:"baseline,omitempty"`
	// EditFormat is how the coder changed files and why (agent.edit_format
	// as resolved for this run); nil when the run never got that far.
	EditFormat *EditFormat `json:"edit_format,omitempty"`
	// HostEdits are the changes flow made to files itself, not the
	// model: the imports of a changed Go file mended after a coder
	// (agent.go_imports). Absent when there were none.
	HostEdits  []HostEdit `json:"host_edits,omitempty"`
	ModelCalls int        `json:"model_calls"`
	ToolCalls  int        `json:"tool_calls"`
	Cycles     int        `json:"cycles"`
	Usage      Usage      `json:"usage"`
	Summary    string     `json:"summary"`
	Reason     string     `json:"reason,omitempty"`
	Error      string     `json:"error,omitempty"`
}

// EditFormat is the coder's edit format in one run: "tools" or "whole",
// and why ("agent.edit_format = \"whole\"", "auto: m has no tool
// calling"); and where the tools were declared to the model: "native"
// (the requests' tools field and the system prompt) or "text" (the system
// prompt alone), and why.
type EditFormat struct {
	Format   string `json:"format"`
	Why      string `json:"why"`
	Tools    string `json:"tools,omitempty"`
	ToolsWhy string `json:"tools_why,omitempty"`
}

// HostEdit is one change flow made to a file itself: in which cycle, to
// which file, what it did ("imports: adds `fmt`"), and whether the write
// went through ("ok", or "error" with the tool's reason: an unsaved
// buffer, a stale file).
type HostEdit struct {
	Cycle  int    `json:"cycle"`
	Path   string `json:"path"`
	What   string `json:"what"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// Role is the state of one role invocation.
type Role struct {
	Role  string `json:"role"`
	Model string `json:"model"`
	// Server names the role's server: "ollama" for the [ollama] table, or
	// a [servers.NAME] table's name (doc/design.md §7.9); "" in reports of
	// older versions.
	Server     string   `json:"server,omitempty"`
	Status     string   `json:"status"`
	Turns      int      `json:"turns"`
	Summary    string   `json:"summary"`
	ToolErrors int      `json:"tool_errors"`
	Error      string   `json:"error,omitempty"`
	Approved   *bool    `json:"approved,omitempty"` // reviewer only
	Issues     []string `json:"issues,omitempty"`   // reviewer only
}

// Usage is the run's token usage as reported by the model server.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Verification is the host's verification of one cycle (doc/design.md §8).
type Verification struct {
	Status   string        `json:"status"`
	Verified bool          `json:"verified"`
	Checks   []CheckResult `json:"checks"`
	Reason   string        `json:"reason"`
	Source   string        `json:"source,omitempty"`
	Coverage []Coverage    `json:"coverage"`
	// Fingerprints maps each changed file to the SHA-256 of its raw bytes
	// when the coder finished ("" for a file that no longer exists).
	Fingerprints map[string]string `json:"fingerprints,omitempty"`
	// Baseline is one sentence comparing the checks with their baseline
	// (measured before the coder's first edit), "" without one.
	Baseline string `json:"baseline,omitempty"`
	// Weakening lists the edits found to weaken the checks: removed or
	// skipped tests, changed expected values, changed check configuration.
	Weakening []Weakening `json:"weakening,omitempty"`
	// FailFirst is the fail-then-pass evidence, when it was taken.
	FailFirst *FailFirst `json:"fail_first,omitempty"`
	// Evidence names what shows the change in a verified verification
	// (EvidenceFixed, EvidenceFailThenPass, EvidenceBehaviourPreserving);
	// "" when it is not verified.
	Evidence string `json:"evidence,omitempty"`
	// NoEvidence is true when everything passed but no check shows the
	// change: the one reason the coder is asked for a test.
	NoEvidence bool `json:"no_evidence,omitempty"`
}

// What verified a verification (doc/design.md §8.7).
const (
	// EvidenceFixed: a required check that failed in the baseline passes.
	EvidenceFixed = "fixed"
	// EvidenceFailThenPass: tests the run added or changed fail on the
	// pre-run code and pass on the new code.
	EvidenceFailThenPass = "fail_then_pass"
	// EvidenceBehaviourPreserving: the operator said the task changes no
	// behaviour, and nothing that passed fails.
	EvidenceBehaviourPreserving = "behaviour_preserving"
)

// Weakening is one edit that weakens what a check checks.
type Weakening struct {
	Path string `json:"path"`
	What string `json:"what"`
	Name string `json:"name,omitempty"`
	Line int    `json:"line,omitempty"`
	// Detail is one sentence naming the file and what was weakened.
	Detail string `json:"detail"`
	// Excused is true when the operator allows test edits and the
	// fail-then-pass evidence showed the changed tests still catch the
	// old code.
	Excused bool `json:"excused,omitempty"`
}

// FailFirst is the fail-then-pass evidence of a run that added or changed
// tests: the test checks run on a scratch copy holding the new tests and
// the production files as they were before the run.
type FailFirst struct {
	// Status is "failed_before" (the tests catch the old code: evidence
	// given), "passed_before" (they do not) or "error" (no evidence).
	Status string `json:"status"`
	// Tests are the added or changed test files.
	Tests []string `json:"tests"`
	// Restored are the files put back to their pre-run content.
	Restored []string `json:"restored"`
	// Checks are the test checks' results on the scratch copy.
	Checks []CheckResult `json:"checks"`
	Reason string        `json:"reason,omitempty"`
}

// FailFirst statuses.
const (
	FailFirstFailedBefore = "failed_before"
	FailFirstPassedBefore = "passed_before"
	FailFirstError        = "error"
)

// Coverage is the static-analysis coverage of one changed file.
type Coverage struct {
	Path     string           `json:"path"`
	Language string           `json:"language"`
	Status   string           `json:"status"`
	Source   string           `json:"source"`
	Checks   []string         `json:"checks"`
	Evidence []map[string]any `json:"evidence"`
}
