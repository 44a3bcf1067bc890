package human

func (p *printer) check(r checkView) {
	verdict := "not verified"
	if r.Verified {
		verdict = "verified"
	}
	p.line("%s %s · %s", p.mark(r.Status), p.style(bold, verdict), p.statusWord(r.Status))
	if why := reason(r.Status, r.Reason, r.Error); why != "" {
		p.line("  %s", why)
	}
	p.checks(r.Checks)
}
