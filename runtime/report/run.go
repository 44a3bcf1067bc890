package report

// Run is the report of one task run (`flow run`, MCP `flow_run`,
// `:FlowBuild`, a TUI task): the reference's keys plus flow's extensions.
type Run struct {
	Status              string         `json:"status"`
	Verified            bool           `json:"verified"`
	Task                string         `json:"task"`
	RunID               string         `json:"run_id"`
	Workspace           string         `json:"workspace"`
	StartedAt           string         `json:"started_at"` // RFC 3339, UTC
	DurationMS          int64          `json:"duration_ms"`
	Roles               []Role         `json:"roles"`
	Events              []Event        `json:"events"`
	ChangedFiles        []string       `json:"changed_files"`
	Checks              []CheckResult  `json:"checks"`
	Verification        *Verification  `json:"verification"`
	VerificationHistory []Verification `json:"verification_history"`
	ModelCalls          int            `json:"model_calls"`
	ToolCalls           int            `json:"tool_calls"`
	Cycles              int            `json:"cycles"`
	Usage               Usage          `json:"usage"`
	Summary             string         `json:"summary"`
	Reason              string         `json:"reason,omitempty"`
	Error               string         `json:"error,omitempty"`
}

// Role is the state of one role invocation.
type Role struct {
	Role       string   `json:"role"`
	Model      string   `json:"model"`
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

// Verification is the host's verification of one cycle (SPEC §8).
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
}

// Coverage is the static-analysis coverage of one changed file.
type Coverage struct {
	Path     string           `json:"path"`
	Language string           `json:"language"`
	Status   string           `json:"status"`
	Source   string           `json:"source"`
	Checks   []string         `json:"checks"`
	Evidence []map[string]any `json:"evidence"`
}
