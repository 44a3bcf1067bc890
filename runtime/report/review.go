package report

// A person's review of a run's change (doc/design.md §12.7). It is
// recorded beside the host's verification, never in it: a kept hunk never
// makes a run verified.

// Hunk states.
const (
	HunkPending  = "pending"
	HunkKept     = "kept"
	HunkReverted = "reverted"
)

// ShowsNone is a hunk's evidence when no check shows its file's change.
const ShowsNone = "none"

// Review is the person's review of a run as its record keeps it.
type Review struct {
	// By is who reviewed: "person".
	By       string `json:"by"`
	Accepted int    `json:"accepted"`
	Rejected int    `json:"rejected"`
	Pending  int    `json:"pending"`
	// At is the time of the last decision (RFC 3339, UTC).
	At string `json:"at"`
	// Summary says in one sentence what the person decided beside the
	// host's verdict, and after a revert that `flow check` tells whether
	// what remains still passes.
	Summary string `json:"summary"`
}

// Hunk is one hunk of a run's change: its file, its line ranges in the
// content before the run (old) and the content the run left (new), as a
// unified diff's header gives them, its text, its state and the host's
// evidence for its file.
type Hunk struct {
	// ID is stable across processes: it is derived from the file, the
	// ranges and the text.
	ID       string       `json:"id"`
	Path     string       `json:"path"`
	OldStart int          `json:"old_start"`
	OldLines int          `json:"old_lines"`
	NewStart int          `json:"new_start"`
	NewLines int          `json:"new_lines"`
	State    string       `json:"state"`
	Evidence HunkEvidence `json:"evidence"`
	// Text is the hunk as a unified diff shows it: its @@ header line and
	// its lines, each with its ' ', '-' or '+' prefix.
	Text string `json:"text"`
}

// HunkEvidence is what the host's verification says about a hunk's file.
type HunkEvidence struct {
	// Checks are the checks that cover the file.
	Checks []string `json:"checks"`
	// Shows is what shows the change: EvidenceFixed,
	// EvidenceFailThenPass, EvidenceBehaviourPreserving, or ShowsNone.
	Shows string `json:"shows"`
	// Sentence says it for a person.
	Sentence string `json:"sentence"`
}

// ReviewReport is what `flow review` and MCP flow_review return: the run's
// hunks with their states, the review record, and the host's verdict
// apart from it.
type ReviewReport struct {
	// Status is "ok" when every decision asked for was applied, "conflict"
	// when some were refused because the lines changed since the run (see
	// Conflicts), "error" when the review could not be read or written.
	Status    string `json:"status"`
	RunID     string `json:"run_id"`
	Workspace string `json:"workspace"`
	// Host is the host's verdict of the run (its status) and Verified
	// whether the host verified it; a review never changes either.
	Host     string `json:"host"`
	Verified bool   `json:"verified"`
	Hunks    []Hunk `json:"hunks"`
	Review   Review `json:"review"`
	// Applied lists the hunks whose decision this call applied.
	Applied   []string   `json:"applied"`
	Conflicts []Conflict `json:"conflicts"`
	// Message says in one sentence what happened, and which verdict is
	// whose.
	Message string `json:"message"`
	Error   string `json:"error,omitempty"`
}

// Normalize returns r with every nil list member empty.
func (r ReviewReport) Normalize() ReviewReport {
	r.Applied = orEmpty(r.Applied)
	r.Conflicts = orEmpty(r.Conflicts)
	hunks := make([]Hunk, len(r.Hunks))
	for i, h := range r.Hunks {
		h.Evidence.Checks = orEmpty(h.Evidence.Checks)
		hunks[i] = h
	}
	r.Hunks = hunks
	return r
}
