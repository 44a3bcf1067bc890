// Package report defines the JSON reports flow prints and returns: the run
// report, the check report, the undo report and the status report (doc/design.md
// §14). It is a leaf package: every front end (CLI, MCP, Neovim, TUI)
// serialises these types unchanged, so the wire shape lives in one place.
// It also owns the two things every report relies on: the one run id
// generator ([NewRunID]), so the id a user sees has one shape whichever
// layer named the run, and the one normalisation ([Run.Normalize] and its
// siblings, applied by [Marshal]), so list members say [] and never null
// without every constructor filling them by hand.
package report

import (
	"bytes"
	"encoding/json"
)

// Status values shared by reports, roles, checks and verification objects.
const (
	StatusOK          = "ok"
	StatusFailed      = "failed"
	StatusUnverified  = "unverified"
	StatusStale       = "stale"
	StatusError       = "error"
	StatusTimeout     = "timeout"
	StatusUnavailable = "unavailable"
	StatusCancelled   = "cancelled"
	StatusBusy        = "busy"
	// StatusSkipped is a role the host chose not to run (the planner with
	// agent.planner = "auto"); its summary says why.
	StatusSkipped = "skipped"
)

// SourceCheck is the source tag of every configured check result.
const SourceCheck = "flow.check"

// CheckResult is the outcome of one named check (doc/design.md §9, §15).
type CheckResult struct {
	Name            string   `json:"name"`
	Source          string   `json:"source"`
	Cmd             []string `json:"cmd,omitempty"`
	Timeout         int      `json:"timeout,omitempty"`
	Required        bool     `json:"required"`
	Kind            string   `json:"kind,omitempty"`
	Filetypes       []string `json:"filetypes"`
	Status          string   `json:"status"`
	Returncode      *int     `json:"returncode,omitempty"`
	Error           string   `json:"error,omitempty"`
	Stdout          string   `json:"stdout"`
	StdoutTruncated bool     `json:"stdout_truncated"`
	Stderr          string   `json:"stderr"`
	StderrTruncated bool     `json:"stderr_truncated"`
	DurationMS      int64    `json:"duration_ms"`
	// Baseline compares the result with the same check run before the
	// coder's first edit: one of the Baseline* values, "" when no baseline
	// was measured. BaselineStatus is the status it had then.
	Baseline       string `json:"baseline,omitempty"`
	BaselineStatus string `json:"baseline_status,omitempty"`
}

// Baseline outcomes of a check result.
const (
	BaselineFixed       = "fixed"        // failing before the run, passing now
	BaselineBroken      = "broken"       // passing before the run, failing now: broken by this run
	BaselinePreExisting = "pre-existing" // failing before the run and still failing
	BaselineUnchanged   = "unchanged"    // passing before and now
)

// CheckReport aggregates the named checks of one `flow check` invocation, one
// `flow_check` tool call or one verification step.
type CheckReport struct {
	Status   string        `json:"status"`
	Verified bool          `json:"verified"`
	Checks   []CheckResult `json:"checks"`
	Reason   string        `json:"reason"`
	Source   string        `json:"source,omitempty"`
	Error    string        `json:"error,omitempty"`
}

// Backend describes the model backend in a status report. Status never
// contacts the model, so Connectivity is always "unverified".
type Backend struct {
	Type         string `json:"type"`
	API          string `json:"api"`
	BaseURL      string `json:"base_url"`
	Connectivity string `json:"connectivity"`
	Note         string `json:"note"`
}

// Models names the effective model of every role, and the server each
// role's requests go to.
type Models struct {
	Planner  string `json:"planner"`
	Coder    string `json:"coder"`
	Reviewer string `json:"reviewer"`
	// Servers names each role's server: "ollama" for the [ollama] table,
	// else a [servers.NAME] table's name (doc/design.md §7.9). flow always
	// sets it; nil in a report made elsewhere or by an older flow.
	Servers *RoleServers `json:"servers,omitempty"`
}

// RoleServers names a server per role.
type RoleServers struct {
	Planner  string `json:"planner"`
	Coder    string `json:"coder"`
	Reviewer string `json:"reviewer"`
}

// ServerOf returns role's server, "" when the report does not say (an
// older report).
func (m Models) ServerOf(role string) string {
	if m.Servers == nil {
		return ""
	}
	switch role {
	case "planner":
		return m.Servers.Planner
	case "coder":
		return m.Servers.Coder
	case "reviewer":
		return m.Servers.Reviewer
	}
	return ""
}

// CheckSummary is the argv-free view of a configured check in a status report.
type CheckSummary struct {
	Name      string   `json:"name"`
	Required  bool     `json:"required"`
	Kind      string   `json:"kind"`
	Filetypes []string `json:"filetypes"`
}

// Editor describes the editor attachment in a status report.
type Editor struct {
	Status    string         `json:"status"`
	Tools     []string       `json:"tools"`
	Error     *string        `json:"error"`
	Attached  bool           `json:"attached"`
	Workspace string         `json:"workspace,omitempty"`
	Context   map[string]any `json:"context,omitempty"`
}

// Capabilities states what this flow binary can and cannot do.
type Capabilities struct {
	SingleWriter        bool   `json:"single_writer"`
	ReadOnlyConcurrency int    `json:"read_only_concurrency"`
	ArbitraryCommands   bool   `json:"arbitrary_commands"`
	Plugins             bool   `json:"plugins"`
	FileIO              string `json:"file_io"`
	Undo                bool   `json:"undo"`
}

// Status is the report of `flow status` and the MCP `flow_status` tool.
type Status struct {
	Status     string  `json:"status"`
	Version    string  `json:"version"`
	Workspace  string  `json:"workspace"`
	Trusted    bool    `json:"trusted"`
	ConfigPath *string `json:"config_path"`
	Backend    Backend `json:"backend"`
	Models     Models  `json:"models"`
	// Reviewer is the reviewer's measurement, as in a run's report.
	Reviewer     *ReviewerStanding `json:"reviewer,omitempty"`
	Checks       []CheckSummary    `json:"checks"`
	Editor       Editor            `json:"editor"`
	Warnings     []string          `json:"warnings"`
	Capabilities Capabilities      `json:"capabilities"`
	Busy         bool              `json:"busy"`
	LastReport   any               `json:"last_report"`
	Error        string            `json:"error,omitempty"`
}

// Marshal encodes v as compact UTF-8 JSON without HTML escaping and without a
// trailing newline, a report normalised first (see [Run.Normalize]). Every
// report flow prints or sends goes through it.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(normalized(v)); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
