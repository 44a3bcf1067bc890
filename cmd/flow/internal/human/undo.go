package human

func (p *printer) undo(r undoView) {
	head := p.mark(r.Status) + " undo · " + p.statusWord(r.Status)
	if r.RunID != "" {
		head += " · run " + r.RunID
	}
	p.line("%s", head)
	// A failed undo leads with its cause; the message says what was done.
	if r.Error != "" && r.Status != "ok" {
		p.line("  %s", r.Error)
		if r.Message != "" && r.Message != r.Error {
			p.line("  %s", p.style(dim, r.Message))
		}
	} else if r.Message != "" {
		p.line("  %s", r.Message)
	}
	p.files("restored", r.Restored)
	p.files("removed", r.Removed)
	p.files("already as before", r.Unchanged)
	if len(r.Conflicts) > 0 {
		p.heading("left untouched")
		for _, c := range r.Conflicts {
			p.line("  %s %s — %s", p.style(red, "✗"), c.Path, c.Reason)
		}
	}
	for _, d := range r.Diffs {
		if d.Diff != "" && !d.Binary {
			p.blank()
			p.colorDiff(d.Diff)
		}
	}
}

func (p *printer) files(title string, paths []string) {
	if len(paths) == 0 {
		return
	}
	p.heading(title)
	for _, f := range paths {
		p.line("  %s", f)
	}
}
