package report

// The reports' list members are always JSON arrays, never null: a client
// (Rose, a small model, a Lua table) can iterate them without a nil check.
// Normalize is the one place that fills them, and [Marshal] applies it to
// every report it encodes, so code that builds a report never fills empty
// slices by hand. (A MarshalJSON method would do the same implicitly, but
// it would also be promoted through every struct embedding a report and
// silently drop the embedding struct's own fields.)

// normalized returns v with its list members filled when v is a report.
func normalized(v any) any {
	switch r := v.(type) {
	case Run:
		return r.Normalize()
	case *Run:
		if r != nil {
			return r.Normalize()
		}
	case CheckReport:
		return r.Normalize()
	case *CheckReport:
		if r != nil {
			return r.Normalize()
		}
	case Undo:
		return r.Normalize()
	case *Undo:
		if r != nil {
			return r.Normalize()
		}
	case ReviewReport:
		return r.Normalize()
	case *ReviewReport:
		if r != nil {
			return r.Normalize()
		}
	case Status:
		return r.Normalize()
	case *Status:
		if r != nil {
			return r.Normalize()
		}
	case Verification:
		return r.Normalize()
	}
	return v
}

// orEmpty returns s, or an empty slice when s is nil.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Normalize returns r with every nil list member empty.
func (r Run) Normalize() Run {
	r.Roles = orEmpty(r.Roles)
	r.Events = orEmpty(r.Events)
	r.ChangedFiles = orEmpty(r.ChangedFiles)
	r.Diffs = normalizeDiffs(r.Diffs)
	r.Checks = normalizeChecks(r.Checks)
	hist := make([]Verification, len(r.VerificationHistory))
	for i, v := range r.VerificationHistory {
		hist[i] = v.Normalize()
	}
	r.VerificationHistory = hist
	if r.Verification != nil {
		v := r.Verification.Normalize()
		r.Verification = &v
	}
	return r
}

// Normalize returns v with every nil list member empty.
func (v Verification) Normalize() Verification {
	v.Checks = normalizeChecks(v.Checks)
	cov := make([]Coverage, len(v.Coverage))
	for i, c := range v.Coverage {
		c.Checks = orEmpty(c.Checks)
		c.Evidence = orEmpty(c.Evidence)
		cov[i] = c
	}
	v.Coverage = cov
	return v
}

// Normalize returns r with every nil list member empty.
func (r CheckReport) Normalize() CheckReport {
	r.Checks = normalizeChecks(r.Checks)
	return r
}

// Normalize returns r with every nil list member empty.
func (r Undo) Normalize() Undo {
	r.Restored = orEmpty(r.Restored)
	r.Removed = orEmpty(r.Removed)
	r.Unchanged = orEmpty(r.Unchanged)
	r.Conflicts = orEmpty(r.Conflicts)
	r.Diffs = normalizeDiffs(r.Diffs)
	return r
}

// Normalize returns st with every nil list member empty.
func (st Status) Normalize() Status {
	checks := make([]CheckSummary, len(st.Checks))
	for i, c := range st.Checks {
		c.Filetypes = orEmpty(c.Filetypes)
		checks[i] = c
	}
	st.Checks = checks
	st.Warnings = orEmpty(st.Warnings)
	st.Editor.Tools = orEmpty(st.Editor.Tools)
	return st
}

func normalizeChecks(in []CheckResult) []CheckResult {
	out := make([]CheckResult, len(in))
	for i, c := range in {
		c.Filetypes = orEmpty(c.Filetypes)
		out[i] = c
	}
	return out
}

func normalizeDiffs(in []FileDiff) []FileDiff {
	out := make([]FileDiff, len(in))
	for i, d := range in {
		d.Hunks = orEmpty(d.Hunks)
		out[i] = d
	}
	return out
}
