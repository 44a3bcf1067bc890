package human

import "strings"

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
	p.heading("backend")
	b := r.Backend
	line := "  " + p.mark(b.Status) + " " + b.BaseURL + " (" + b.API + ")"
	if b.Version != "" {
		line += " · version " + b.Version
	}
	p.line("%s", line)
	if b.Error != "" {
		p.line("      %s", b.Error)
	}
	if len(r.Models) > 0 {
		p.heading("models")
		for _, m := range r.Models {
			s := "  " + p.mark(m.Status) + " " + m.Model + " " + p.style(dim, "("+strings.Join(m.Roles, ", ")+")")
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
	if len(r.Warnings) > 0 {
		p.heading("warnings")
		for _, w := range r.Warnings {
			p.line("  %s %s", p.style(yellow, "!"), w)
		}
	}
}
