package report

// FileDiff is one changed file's unified diff as reports carry it (doc/design.md §14
// as amended). Diff is bounded; Truncated says that its tail was cut.
type FileDiff struct {
	Path string `json:"path"`
	// Change is "modified", "added" or "deleted".
	Change    string `json:"change"`
	Added     int    `json:"added"`
	Removed   int    `json:"removed"`
	Binary    bool   `json:"binary,omitempty"`
	Diff      string `json:"diff"`
	Truncated bool   `json:"truncated"`
	// Hunks holds the 1-based line, in the new content, of the first changed
	// line of each hunk (for a deletion: the line that now stands there), so
	// that an editor can jump to it.
	Hunks []int `json:"hunks"`
}

// Change values of a [FileDiff].
const (
	ChangeModified = "modified"
	ChangeAdded    = "added"
	ChangeDeleted  = "deleted"
)
