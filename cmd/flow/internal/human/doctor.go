package human

import (
	"fmt"
	"strings"
)

func (p *printer) doctor(r doctorView) {
	p.line("%s doctor · %s · flow %s", p.mark(r.Status), p.statusWord(r.Status), r.Version)
	cfg := p.style(yellow, "none loaded")
	if r.ConfigPath != nil && *r.ConfigPath != "" {
		cfg = *r.ConfigPath
	}
	p.line("  %s %s", p.style(dim, "config:"), cfg)
	if r.LogFile != "" {
		p.line("  %s %s", p.style(dim, "log:   "), r.LogFile)
	}
	servers := r.Servers
	if len(servers) == 0 {
		// A report of a flow with one server.
		servers = []doctorServer{r.Backend}
	}
	p.doctorServers(servers)
	if len(r.Models) > 0 {
		p.heading("models")
		for _, m := range r.Models {
			where := strings.Join(m.Roles, ", ")
			if m.Server != "" && len(servers) > 1 {
				where += " on " + m.Server
			}
			s := "  " + p.mark(m.Status) + " " + m.Model + " " + p.style(dim, "("+where+")")
			if len(m.Capabilities) > 0 {
				s += " · " + strings.Join(m.Capabilities, " ")
			}
			p.line("%s", s)
			if m.Error != "" {
				p.line("      %s", m.Error)
			}
		}
	}
	if len(r.Checks) > 0 {
		p.heading("checks")
		for _, c := range r.Checks {
			s := "  " + p.mark(c.Status) + " " + c.Name + " " + p.style(dim, c.Executable)
			if c.Path != "" {
				s += p.style(dim, " → "+c.Path)
			}
			p.line("%s", s)
			if c.Error != "" {
				p.line("      %s", c.Error)
			}
		}
	}
	p.doctorReviewer(r)
	if len(r.Warnings) > 0 {
		p.heading("warnings")
		for _, w := range r.Warnings {
			p.line("  %s %s", p.style(yellow, "!"), w)
		}
	}
}

// doctorServers prints each server a role uses, with its roles.
func (p *printer) doctorServers(servers []doctorServer) {
	p.heading("servers")
	for _, b := range servers {
		line := "  " + p.mark(b.Status) + " "
		if b.Name != "" {
			line += b.Name + " "
		}
		line += b.BaseURL + " (" + b.API + ")"
		if b.Version != "" {
			line += " · version " + b.Version
		}
		if len(b.Roles) > 0 {
			line += " " + p.style(dim, "for "+strings.Join(b.Roles, ", "))
		}
		p.line("%s", line)
		if b.Error != "" {
			p.line("      %s", b.Error)
		}
	}
}

// doctorReviewer prints the reviewer's standing and, after --reviewer,
// each case's verdict (doc/design.md §8.10).
func (p *printer) doctorReviewer(r doctorView) {
	if r.Reviewer == nil {
		return
	}
	p.heading("reviewer")
	for _, c := range r.Reviewer.Results {
		mark := p.style(green, "✓")
		switch {
		case !c.Judged:
			mark = p.style(yellow, "-")
		case (c.Label == "wrong") != (c.Verdict == "rejected"):
			mark = p.style(red, "✗")
		}
		line := fmt.Sprintf("  %s %s %s: %s", mark, c.Case, p.style(dim, "("+c.Label+")"), c.Verdict)
		if c.NotJudged != "" {
			line += " — " + c.NotJudged
		}
		p.line("%s", line)
	}
	p.reviewerLine("", &r.Reviewer.ReviewerStanding)
	if m := r.Reviewer.Measured; m != nil {
		p.line("  %s", m.Sentence)
	}
}
