package config

import (
	"fmt"
	"path"
	"strings"
)

// MaxGlobs bounds each glob list of the [verify] table.
const MaxGlobs = 64

// Verify is the [verify] table: how flow guards "verified" against edits
// that weaken the checks instead of fixing the code.
type Verify struct {
	// Tests are extra globs naming test files, added to the built-in
	// conventions (*_test.go, test_*.py, *.test.js, tests/**, …).
	Tests []string `json:"tests"`
	// Protect are globs of files no file tool may write: the definitions
	// of what the checks run (a Makefile, a lint configuration, a script).
	Protect []string `json:"protect"`
	// AllowTestEdits accepts a run that weakened an existing test, but
	// only with fail-then-pass evidence: the changed tests fail on the
	// production code as it was before the run.
	AllowTestEdits bool `json:"allow_test_edits"`
	// RequireFailingFirst verifies a run that added or changed tests only
	// when those tests fail on the pre-run production code and pass on the
	// new code. It costs a scratch copy of the workspace and one more run
	// of the test checks.
	RequireFailingFirst bool `json:"require_failing_first"`
	// BehaviourPreserving says the task should change no behaviour (a
	// refactor, a rename): a run is then verified when nothing that passed
	// before it fails, without a check that shows the change
	// (doc/design.md §8.7). Never the default.
	BehaviourPreserving bool `json:"behaviour_preserving"`
	// Reviewer is what the reviewer's rejection is worth (doc/design.md
	// §8.9): ReviewerGate (a rejection fails the run) or ReviewerAdvisory
	// (its issues reach the repair and the person, but a rejection alone
	// leaves the run unverified). Either way an approval never verifies a
	// run without the checks' evidence. Empty means ReviewerGate.
	Reviewer string `json:"reviewer"`
}

// The values of verify.reviewer.
const (
	ReviewerGate     = "gate"
	ReviewerAdvisory = "advisory"
)

// reviewerMessage is the problem of a bad verify.reviewer.
const reviewerMessage = `verify.reviewer must be "gate" (a rejection fails the run) or "advisory" (a rejection leaves it unverified)`

func validReviewer(s string) bool { return s == ReviewerGate || s == ReviewerAdvisory }

// ReviewerIsAdvisory reports whether the reviewer's rejection only leaves a
// run unverified.
func (v Verify) ReviewerIsAdvisory() bool { return v.Reviewer == ReviewerAdvisory }

// verifyKeys are the allowed keys of the [verify] table.
var verifyKeys = []string{"tests", "protect", "allow_test_edits", "require_failing_first", "behaviour_preserving", "reviewer"}

func (d *decoder) verify(t map[string]any) {
	d.rejectUnknown("verify", t, verifyKeys)
	v := &d.out.cfg.Verify
	for _, f := range []struct {
		key string
		dst *[]string
	}{{"tests", &v.Tests}, {"protect", &v.Protect}} {
		raw, ok := t[f.key]
		if !ok {
			continue
		}
		list, ok := stringList(raw)
		if !ok {
			d.p.add("verify.%s must be an array of glob strings, for example [\"spec/**/*.lua\"]", f.key)
			continue
		}
		if msg := checkGlobs("verify."+f.key, list); msg != "" {
			d.p.add("%s", msg)
			continue
		}
		*f.dst = list
	}
	if raw, ok := t["reviewer"]; ok {
		if s, ok := raw.(string); ok && validReviewer(s) {
			v.Reviewer = s
		} else {
			d.p.add("%s", reviewerMessage)
		}
	}
	for _, f := range []struct {
		key string
		dst *bool
	}{{"allow_test_edits", &v.AllowTestEdits}, {"require_failing_first", &v.RequireFailingFirst}, {"behaviour_preserving", &v.BehaviourPreserving}} {
		raw, ok := t[f.key]
		if !ok {
			continue
		}
		if b, ok := raw.(bool); ok {
			*f.dst = b
		} else {
			d.p.add("verify.%s must be a boolean", f.key)
		}
	}
}

// stringList returns v as a list of strings (an empty TOML array is one).
func stringList(v any) ([]string, bool) {
	items, ok := v.([]any)
	if !ok {
		if s, ok := v.([]string); ok {
			return s, true
		}
		return nil, false
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// validateVerify returns the value problems of a [verify] table built by
// code.
func validateVerify(v *Verify) problems {
	var p problems
	if msg := checkGlobs("verify.tests", v.Tests); msg != "" {
		p.add("%s", msg)
	}
	if msg := checkGlobs("verify.protect", v.Protect); msg != "" {
		p.add("%s", msg)
	}
	if v.Reviewer != "" && !validReviewer(v.Reviewer) {
		p.add("%s", reviewerMessage)
	}
	return p
}

// checkGlobs validates a list of workspace globs: slash-separated and
// relative to the workspace root, "**" for any number of directories, each
// other segment a valid path.Match pattern, no "..".
func checkGlobs(key string, globs []string) string {
	if len(globs) > MaxGlobs {
		return fmt.Sprintf("%s must list at most %d globs", key, MaxGlobs)
	}
	for _, g := range globs {
		if why := globProblem(g); why != "" {
			return fmt.Sprintf("%s has an invalid glob '%s': %s", key, show(g), why)
		}
	}
	return ""
}

func globProblem(g string) string {
	switch {
	case strings.TrimSpace(g) == "":
		return "it is empty"
	case len(g) > 1024:
		return "it is longer than 1024 characters"
	case strings.IndexByte(g, 0) >= 0:
		return "it contains a NUL byte"
	case strings.HasPrefix(g, "/"):
		return "globs are relative to the workspace root; drop the leading /"
	case strings.Contains(g, `\`):
		return "use / to separate directories"
	}
	for _, seg := range strings.Split(g, "/") {
		if seg == ".." {
			return "a glob cannot leave the workspace (..)"
		}
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return "bad pattern syntax in '" + seg + "' (unbalanced [ ] or trailing \\)"
		}
	}
	return ""
}
