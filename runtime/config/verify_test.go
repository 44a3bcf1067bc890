package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseVerifyTable(t *testing.T) {
	t.Parallel()
	p, err := parse([]byte(`[agent]
baseline = false
[verify]
tests = ["spec/**/*.lua", "it_*.sh"]
protect = ["Makefile", ".golangci.yml", "scripts/check-*"]
allow_test_edits = true
require_failing_first = true
reviewer = "advisory"
`))
	if err != nil {
		t.Fatalf("parse = %v", err)
	}
	want := Verify{
		Tests:          []string{"spec/**/*.lua", "it_*.sh"},
		Protect:        []string{"Makefile", ".golangci.yml", "scripts/check-*"},
		AllowTestEdits: true, RequireFailingFirst: true,
		Reviewer: ReviewerAdvisory,
	}
	if diff := cmp.Diff(want, p.cfg.Verify); diff != "" {
		t.Errorf("verify (-want +got):\n%s", diff)
	}
	if p.cfg.Agent.Baseline {
		t.Errorf("agent.baseline = true, want false as configured")
	}
	if err := p.cfg.Validate(); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
}

func TestVerifyDefaults(t *testing.T) {
	t.Parallel()
	d := Default()
	if !d.Agent.Baseline {
		t.Errorf("Default().Agent.Baseline = false, want true (the baseline is on unless turned off)")
	}
	if diff := cmp.Diff(Verify{Reviewer: ReviewerGate}, d.Verify); diff != "" {
		t.Errorf("Default().Verify (-want +got):\n%s", diff)
	}
}

func TestParseVerifyInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, doc, want string }{
		{"numeric baseline", "[agent]\nbaseline = 1", "agent.baseline must be a boolean"},
		{"string answer_code", "[agent]\nanswer_code = \"yes\"", "agent.answer_code must be a boolean"},
		{"string transcript", "[agent]\ntranscript = 1", "agent.transcript must be a boolean"},
		{"unknown planner", "[agent]\nplanner = \"never\"", `agent.planner must be "auto" (skip the planner when the brief holds every source file) or "always"`},
		{"numeric planner", "[agent]\nplanner = 1", `agent.planner must be "auto" (skip the planner when the brief holds every source file) or "always"`},
		{"unknown edit format", "[agent]\nedit_format = \"diff\"", `agent.edit_format must be "auto"`},
		{"unknown tool declarations", "[agent]\ntool_declarations = \"json\"", `agent.tool_declarations must be "auto"`},
		{"tool declarations not a string", "[agent]\ntool_declarations = true", `agent.tool_declarations must be "auto"`},
		{"verify not a table", "verify = 1", "verify must be a TOML table"},
		{"unknown key", "[verify]\nallow_test_edit = true", "Unknown verify options: allow_test_edit (did you mean allow_test_edits?)"},
		{"string tests", "[verify]\ntests = \"*_spec.lua\"", `verify.tests must be an array of glob strings, for example ["spec/**/*.lua"]`},
		{"mixed protect", "[verify]\nprotect = [\"Makefile\", 1]", `verify.protect must be an array of glob strings, for example ["spec/**/*.lua"]`},
		{"absolute glob", "[verify]\nprotect = [\"/etc/passwd\"]", "verify.protect has an invalid glob '/etc/passwd': globs are relative to the workspace root; drop the leading /"},
		{"dotdot glob", "[verify]\nprotect = [\"a/../b\"]", "verify.protect has an invalid glob 'a/../b': a glob cannot leave the workspace (..)"},
		{"bad pattern", "[verify]\ntests = [\"t[est\"]", "verify.tests has an invalid glob 't[est': bad pattern syntax in 't[est' (unbalanced [ ] or trailing \\)"},
		{"empty glob", "[verify]\ntests = [\"\"]", "verify.tests has an invalid glob '': it is empty"},
		{"string bool", "[verify]\nrequire_failing_first = \"yes\"", "verify.require_failing_first must be a boolean"},
		{"unknown reviewer", "[verify]\nreviewer = \"auto\"", `verify.reviewer must be "gate" (a rejection fails the run) or "advisory" (a rejection leaves it unverified)`},
		{"reviewer not a string", "[verify]\nreviewer = true", `verify.reviewer must be "gate"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parse(%q) = %v, want an error containing %q", tc.doc, err, tc.want)
			}
		})
	}
}

func TestValidateVerify(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Verify.Protect = []string{"ok/**", "bad\\path"}
	c.Verify.Tests = make([]string, MaxGlobs+1)
	for i := range c.Verify.Tests {
		c.Verify.Tests[i] = "t*"
	}
	err := c.Validate()
	for _, want := range []string{"verify.tests must list at most 64 globs", "verify.protect has an invalid glob 'bad\\path': use / to separate directories"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to contain %q", err, want)
		}
	}
}
