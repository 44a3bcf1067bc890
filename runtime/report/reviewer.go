package report

// What flow knows of the configured reviewer's judgement (doc/design.md
// §8.10): its measurement by `flow doctor --reviewer` on labelled changes
// shipped in the binary, kept per server, model and reviewer prompt.

// DiscriminatesAt is the least trust + approval, in percent, at which a
// measured reviewer tells a right change from a wrong one: a verdict that
// ignores the change (approve all, reject all, or a coin) scores 100.
const DiscriminatesAt = 130

// ReviewerStanding is the reviewer a run or status report names: its
// server, model and prompt version, and its measurement, nil when it was
// never measured with these three.
type ReviewerStanding struct {
	Server   string            `json:"server"`
	Model    string            `json:"model"`
	Prompt   string            `json:"prompt"`
	Measured *ReviewerMeasured `json:"measured"`
	// Note says in one sentence what the standing means for the verdict:
	// "not measured: …", or whether the reviewer discriminates.
	Note string `json:"note"`
	// Warning, in a run's report, is the sentence every front end shows
	// next to the run's verdict when the measured reviewer does not
	// discriminate and gave a verdict in this run; "" otherwise.
	Warning string `json:"warning,omitempty"`
}

// ReviewerMeasured are the figures of one measurement.
type ReviewerMeasured struct {
	// At is when it was taken (RFC 3339, UTC); BaseURL the server's URL then.
	At      string `json:"at"`
	BaseURL string `json:"base_url"`
	// Cases were run; Judged got a verdict (the rest: a backend error or
	// no verdict) and count.
	Cases  int `json:"cases"`
	Judged int `json:"judged"`
	// Wrong and Correct are the judged wrong and correct changes;
	// Rejected and Approved how many of each the reviewer got right.
	Wrong    int `json:"wrong"`
	Rejected int `json:"wrong_rejected"`
	Correct  int `json:"correct"`
	Approved int `json:"correct_approved"`
	// TrustPct is Rejected/Wrong and ApprovalPct Approved/Correct, in
	// percent (-1 when none of that label was judged).
	TrustPct    float64 `json:"trust_pct"`
	ApprovalPct float64 `json:"approval_pct"`
	// Discriminates: trust + approval reached DiscriminatesAt with both
	// labels judged.
	Discriminates bool `json:"discriminates"`
	// Sentence says so with the numbers.
	Sentence string `json:"sentence"`
}
