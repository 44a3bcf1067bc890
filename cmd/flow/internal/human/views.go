package human

import (
	"strings"

	"flow/runtime/report"
)

// The views hold the fields of each report that the summary shows, under
// the report's JSON names. The status report is decoded into its own type,
// report.Status.

type checkResult struct {
	Name            string   `json:"name"`
	Cmd             []string `json:"cmd"`
	Required        bool     `json:"required"`
	Kind            string   `json:"kind"`
	Status          string   `json:"status"`
	Returncode      *int     `json:"returncode"`
	Error           string   `json:"error"`
	Stdout          string   `json:"stdout"`
	StdoutTruncated bool     `json:"stdout_truncated"`
	Stderr          string   `json:"stderr"`
	DurationMS      int64    `json:"duration_ms"`
	// Baseline, when the report carries it, says how the check did before
	// the run ("fixed", "broken", "pre-existing", "unchanged").
	Baseline string `json:"baseline"`
}

type fileDiff struct {
	Path      string `json:"path"`
	Change    string `json:"change"`
	Added     int    `json:"added"`
	Removed   int    `json:"removed"`
	Binary    bool   `json:"binary"`
	Diff      string `json:"diff"`
	Truncated bool   `json:"truncated"`
}

type role struct {
	Role     string   `json:"role"`
	Model    string   `json:"model"`
	Status   string   `json:"status"`
	Turns    int      `json:"turns"`
	Summary  string   `json:"summary"`
	Error    string   `json:"error"`
	Approved *bool    `json:"approved"`
	Issues   []string `json:"issues"`
}

// hostEdit is a change flow made to a file itself (report.HostEdit).
type hostEdit struct {
	Cycle  int    `json:"cycle"`
	Path   string `json:"path"`
	What   string `json:"what"`
	Status string `json:"status"`
	Error  string `json:"error"`
}

type runView struct {
	Status       string        `json:"status"`
	Verified     bool          `json:"verified"`
	Task         string        `json:"task"`
	RunID        string        `json:"run_id"`
	Workspace    string        `json:"workspace"`
	DurationMS   int64         `json:"duration_ms"`
	Roles        []role        `json:"roles"`
	ChangedFiles []string      `json:"changed_files"`
	Diffs        []fileDiff    `json:"diffs"`
	HostEdits    []hostEdit    `json:"host_edits"`
	Checks       []checkResult `json:"checks"`
	ModelCalls   int           `json:"model_calls"`
	ToolCalls    int           `json:"tool_calls"`
	Cycles       int           `json:"cycles"`
	Usage        struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Summary      string `json:"summary"`
	Reason       string `json:"reason"`
	Error        string `json:"error"`
	Verification *struct {
		Evidence string `json:"evidence"`
	} `json:"verification"`
	Reviewer *struct {
		Warning string `json:"warning"`
	} `json:"reviewer"`
}

// evidence names what verified the run: "fixed", "fail-then-pass",
// "behaviour preserving"; "" when nothing did.
func (r runView) evidence() string {
	if r.Verification == nil {
		return ""
	}
	return strings.ReplaceAll(r.Verification.Evidence, "_", " ")
}

type checkView struct {
	Status   string        `json:"status"`
	Verified bool          `json:"verified"`
	Checks   []checkResult `json:"checks"`
	Reason   string        `json:"reason"`
	Error    string        `json:"error"`
}

// lastRun is the part of a status report's last_report the summary shows.
type lastRun struct {
	Status   string `json:"status"`
	Verified bool   `json:"verified"`
	RunID    string `json:"run_id"`
	Task     string `json:"task"`
}

type undoView struct {
	Status    string     `json:"status"`
	RunID     string     `json:"run_id"`
	Restored  []string   `json:"restored"`
	Removed   []string   `json:"removed"`
	Unchanged []string   `json:"unchanged"`
	Diffs     []fileDiff `json:"diffs"`
	Conflicts []struct {
		Path   string `json:"path"`
		Reason string `json:"reason"`
	} `json:"conflicts"`
	AlreadyUndone bool   `json:"already_undone"`
	Message       string `json:"message"`
	Error         string `json:"error"`
}

// doctorServer is one server of a doctor report; a report of an older
// flow has no name or roles.
type doctorServer struct {
	Name    string   `json:"name"`
	Roles   []string `json:"roles"`
	Status  string   `json:"status"`
	API     string   `json:"api"`
	BaseURL string   `json:"base_url"`
	Version string   `json:"version"`
	Error   string   `json:"error"`
}

type doctorView struct {
	Status     string         `json:"status"`
	Version    string         `json:"version"`
	Workspace  string         `json:"workspace"`
	ConfigPath *string        `json:"config_path"`
	Backend    doctorServer   `json:"backend"`
	Servers    []doctorServer `json:"servers"`
	Models     []struct {
		Roles        []string `json:"roles"`
		Model        string   `json:"model"`
		Server       string   `json:"server"`
		Status       string   `json:"status"`
		Capabilities []string `json:"capabilities"`
		Error        string   `json:"error"`
	} `json:"models"`
	Checks []struct {
		Name       string `json:"name"`
		Executable string `json:"executable"`
		Path       string `json:"path"`
		Status     string `json:"status"`
		Error      string `json:"error"`
	} `json:"checks"`
	Warnings []string `json:"warnings"`
	LogFile  string   `json:"log_file"`
	Reviewer *struct {
		report.ReviewerStanding
		Results []struct {
			Case      string `json:"case"`
			Label     string `json:"label"`
			Judged    bool   `json:"judged"`
			Verdict   string `json:"verdict"`
			NotJudged string `json:"not_judged"`
		} `json:"results"`
	} `json:"reviewer"`
}

// statusTasks is the tasks part `flow status` adds to its report: flow
// serve's running task and the last few.
type statusTasks struct {
	Tasks *struct {
		Running *taskView  `json:"running"`
		Recent  []taskView `json:"recent"`
	} `json:"tasks"`
}

type taskView struct {
	ID        string `json:"id"`
	Tool      string `json:"tool"`
	Status    string `json:"status"`
	Message   string `json:"message"`
	RunID     string `json:"run_id"`
	CreatedAt string `json:"created_at"`
}
