package human

func (p *printer) check(r checkView) {
	p.line("%s", p.verdict(r.Status, r.Verified))
	if why := reason(r.Status, r.Reason, r.Error); why != "" {
		p.line("  %s", why)
	}
	p.checks(r.Checks)
}
