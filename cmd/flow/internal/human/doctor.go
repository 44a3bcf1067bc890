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
