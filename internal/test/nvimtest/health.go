package nvimtest

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/neovim/go-client/nvim"
)

// HealthItem is one report of a :checkhealth buffer: a vim.health.ok,
// warn, error or info call, with the section (vim.health.start) it is in.
type HealthItem struct {
	Section string
	Level   string // OK, WARNING, ERROR or INFO
	Text    string
	Advice  []string
}

func (h HealthItem) String() string {
	s := fmt.Sprintf("[%s] %s: %s", h.Section, h.Level, h.Text)
	for _, a := range h.Advice {
		s += "\n    advice: " + a
	}
	return s
}

// Health runs `:checkhealth name` in v and returns the reports of the health
// buffer, parsed with [ParseHealth], and the buffer's text (for failure
// messages). The health buffer is wiped afterwards.
func Health(t testing.TB, v *nvim.Nvim, name string) ([]HealthItem, string) {
	t.Helper()
	Exec(t, v, "vim.cmd('checkhealth ' .. ...)", name)
	text := Exec(t, v, "return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n')").(string)
	Exec(t, v, "vim.cmd('bwipeout!')")
	return ParseHealth(text), text
}

// ParseHealth parses the text of a :checkhealth buffer as Neovim renders it
// since 0.7, so that tests assert on what was reported rather than on one
// renderer's layout (testdata holds a recording of each):
//
//   - 0.7: sections are "## Name", reports "  - OK: text", advice under
//     "    - ADVICE:" as "      - text";
//   - later releases (0.10 recorded): sections are "Name ~", reports
//     "- OK text", an info report has no level word at all ("- text"),
//     advice under "  - ADVICE:".
//
// Either level form ("OK: text", "OK text", with or without a leading
// symbol) is accepted with either section form. A report's continuation
// lines (indented deeper than its "- ") are joined to its text with "\n".
func ParseHealth(text string) []HealthItem {
	lines := strings.Split(text, "\n")
	base := -1 // the indentation of a report's "- "; advice is deeper
	for _, l := range lines {
		rest := strings.TrimLeft(l, " ")
		if strings.HasPrefix(rest, "- ") {
			if in := len(l) - len(rest); base < 0 || in < base {
				base = in
			}
		}
	}
	var (
		items    []HealthItem
		section  string
		cur      *HealthItem
		inAdvice bool
	)
	for _, l := range lines {
		rest := strings.TrimLeft(l, " ")
		indent := len(l) - len(rest)
		switch {
		case strings.HasPrefix(l, "==="):
			cur, section = nil, ""
		case strings.HasPrefix(l, "## "):
			cur, section = nil, strings.TrimSpace(strings.TrimPrefix(l, "## "))
		case indent == 0 && strings.HasSuffix(l, " ~"):
			cur, section = nil, strings.TrimSpace(strings.TrimSuffix(l, " ~"))
		case strings.HasPrefix(rest, "- ") && indent == base:
			level, msg := healthLevel(rest[2:])
			items = append(items, HealthItem{Section: section, Level: level, Text: msg})
			cur, inAdvice = &items[len(items)-1], false
		case strings.TrimSpace(l) == "":
		case cur == nil || indent <= base:
			cur = nil // a plugin's header line
		case strings.TrimSpace(rest) == "- ADVICE:":
			inAdvice = true
		case inAdvice && strings.HasPrefix(rest, "- "):
			cur.Advice = append(cur.Advice, strings.TrimSpace(rest[2:]))
		case inAdvice && len(cur.Advice) > 0:
			cur.Advice[len(cur.Advice)-1] += "\n" + strings.TrimSpace(rest)
		default:
			cur.Text += "\n" + strings.TrimSpace(rest)
		}
	}
	return items
}

// healthLevel splits "OK: text", "OK text", "✅ OK text" and a bare info
// text into a level and the text.
func healthLevel(s string) (level, text string) {
	t := strings.TrimLeftFunc(s, func(r rune) bool { return r > unicode.MaxASCII || r == ' ' })
	for _, lv := range []string{"OK", "WARNING", "ERROR", "INFO"} {
		if after, ok := strings.CutPrefix(t, lv); ok && (strings.HasPrefix(after, ": ") || strings.HasPrefix(after, " ") || after == "" || after == ":") {
			return lv, strings.TrimSpace(strings.TrimPrefix(after, ":"))
		}
	}
	return "INFO", strings.TrimSpace(s)
}

// FindHealth returns the first report of level whose text contains sub.
func FindHealth(items []HealthItem, level, sub string) (HealthItem, bool) {
	for _, it := range items {
		if it.Level == level && strings.Contains(it.Text, sub) {
			return it, true
		}
	}
	return HealthItem{}, false
}
