package main

import (
	"slices"
	"strings"
)

// flagSpec is one flag of doc/design.md §1.1. A new flag is one entry of
// [flagTable] (and its line in usage.txt).
type flagSpec struct {
	long, short string
	// value names the flag's value in usage; "" for a flag without one.
	value string
	// set stores the flag's value (the word after it, or after "=").
	set func(o *options, v string) error
	// validWith, when set, refuses the flag with the command line's command.
	validWith func(o *options) error
	order     int // the position in flagTable, set by init
}

// flagTable lists the common flags, accepted before or after the command.
// Their rules about the command are checked in this order.
var flagTable = []flagSpec{
	{long: "--config", short: "-c", value: "FILE", set: func(o *options, v string) error {
		o.configFile = v
		return nonEmpty(v, "--config needs a file name")
	}},
	{long: "--workspace", short: "-w", value: "DIR", set: func(o *options, v string) error {
		o.workspace = v
		return nonEmpty(v, "--workspace needs a directory")
	}},
	{long: "--model", short: "-m", value: "NAME", set: func(o *options, v string) error {
		o.model, o.modelSet = v, true
		return nonEmpty(strings.TrimSpace(v), "--model must be a nonempty model name")
	}},
	{long: "--trusted", set: func(o *options, _ string) error { o.trusted = true; return nil }},
	{long: "--behaviour-preserving", set: func(o *options, _ string) error { o.behaviourPreserving = true; return nil }},
	{long: "--json", set: func(o *options, _ string) error { o.json = true; return nil }, validWith: jsonValidWith},
	{long: "--nvim", value: "SOCKET", set: func(o *options, v string) error {
		o.nvim = v
		return nonEmpty(v, "--nvim needs the path of a Neovim socket")
	}, validWith: nvimValidWith},
	{long: "--editor-timeout", value: "SEC", set: func(o *options, v string) (err error) {
		o.editorTimeout, err = parseEditorTimeout(v)
		return err
	}},
	{long: "--editor-module", value: "NAME", set: func(o *options, v string) error {
		o.editorModule = v
		return validModule(v)
	}, validWith: editorModuleValidWith},
	{long: "--quiet", short: "-q", set: func(o *options, _ string) error { o.quiet = true; return nil }},
	{long: "--name", value: "NAME", set: func(o *options, v string) error { o.name = v; return nil }, validWith: nameValidWith},
	{long: "--list", set: func(o *options, _ string) error { o.reviewList = true; return nil }, validWith: reviewValidWith("--list")},
	{long: "--keep", value: "IDS", set: func(o *options, v string) error {
		o.keep = append(o.keep, splitIDs(v)...)
		return nonEmpty(strings.Trim(v, ", "), "--keep needs hunk ids, file paths or all")
	}, validWith: reviewValidWith("--keep")},
	{long: "--revert", value: "IDS", set: func(o *options, v string) error {
		o.revert = append(o.revert, splitIDs(v)...)
		return nonEmpty(strings.Trim(v, ", "), "--revert needs hunk ids, file paths or all")
	}, validWith: reviewValidWith("--revert")},
	{long: "--reviewer", set: func(o *options, _ string) error { o.measureReviewer = true; return nil }, validWith: func(o *options) error {
		if o.command != "doctor" {
			return usagef("--reviewer is only valid with doctor")
		}
		return nil
	}},
	{long: "--version", set: func(o *options, _ string) error { o.version = true; return nil }, validWith: versionValidWith},
	{long: "--help", short: "-h", set: func(o *options, _ string) error { o.help = true; return nil }},
}

func init() {
	for i := range flagTable {
		flagTable[i].order = i
	}
}

// lookupFlag returns the flag spelled name (long or short), nil when none is.
func lookupFlag(name string) *flagSpec {
	for i := range flagTable {
		if f := &flagTable[i]; f.long == name || (f.short != "" && f.short == name) {
			return f
		}
	}
	return nil
}

func nonEmpty(v, complaint string) error {
	if v == "" {
		return usagef("%s", complaint)
	}
	return nil
}

// jsonValidWith: --json needs a command that prints a report.
func jsonValidWith(o *options) error {
	if lookupCommand(o.command).json {
		return nil
	}
	return usagef("--json is only valid with %s", joinAnd(commandsWhere(func(c *commandSpec) bool { return c.json })))
}

// nvimValidWith refuses --nvim where it cannot mean the editor: the flag
// promises that flow will not write over unsaved buffers, so a command
// that would ignore it must not accept it.
func nvimValidWith(o *options) error {
	c := lookupCommand(o.command)
	if c.editor || o.help || o.command == "help" {
		return nil
	}
	if o.version {
		c = lookupCommand("version")
	}
	why := c.noEditor
	if why == "" {
		why = commandName(c.name) + " does not work through the editor"
	}
	return usagef("--nvim is only valid with %s: %s", joinAnd(commandsWhere(func(c *commandSpec) bool { return c.editor })), why)
}

// editorModuleValidWith: the editor module is loaded in the attached editor.
func editorModuleValidWith(o *options) error {
	if o.nvim == "" && o.command != "nvim" {
		return usagef("--editor-module needs --nvim")
	}
	return nil
}

func nameValidWith(o *options) error {
	if o.command != "check" {
		return usagef("--name is only valid with check")
	}
	return nil
}

// reviewValidWith: the review's flags belong to review.
func reviewValidWith(flag string) func(o *options) error {
	return func(o *options) error {
		if o.command != "review" {
			return usagef("%s is only valid with review", flag)
		}
		return nil
	}
}

// splitIDs splits a comma-separated list of hunk selectors.
func splitIDs(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func versionValidWith(o *options) error {
	if o.command != "" && o.command != "version" {
		return usagef("--version is not valid with %s", o.command)
	}
	return nil
}

// joinAnd joins names as a sentence does: "a, b and c".
func joinAnd(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// flagNames lists every spelling of every flag, for the usage test.
func flagNames() []string {
	var names []string
	for _, f := range flagTable {
		names = append(names, f.long)
		if f.short != "" {
			names = append(names, f.short)
		}
	}
	slices.Sort(names)
	return names
}
