package main

import "slices"

// commandSpec is one subcommand of doc/design.md §1.1: its name, the
// arguments it takes and where the command-specific flags apply. A new
// subcommand is one entry of [commandTable] (and its line in usage.txt and
// its case in run).
type commandSpec struct {
	name string
	// hidden commands are accepted but neither listed nor suggested.
	hidden bool
	// maxArgs bounds the positional arguments (-1: any number); minArgs
	// asks for at least one, with needArgs as the complaint.
	maxArgs  int
	needArgs string
	tooMany  string // the complaint past maxArgs; "" says "takes no arguments"
	// json: the command prints a report, so --json applies.
	json bool
	// editor: the command works through an attached editor, so --nvim
	// applies; noEditor says why a command that does not refuses it.
	editor   bool
	noEditor string
}

// commandTable lists the subcommands. The TUI is the command "".
var commandTable = []commandSpec{
	{name: "", noEditor: "the terminal UI works on the files on disk"},
	{name: "run", maxArgs: -1, needArgs: "run needs a task: flow run TASK...", json: true, editor: true},
	{name: "check", maxArgs: 1, tooMany: "check takes at most one argument", json: true, editor: true},
	{name: "status", json: true, editor: true},
	{name: "serve", editor: true},
	{name: "tui", noEditor: "the terminal UI works on the files on disk"},
	{name: "nvim", noEditor: "flow nvim talks to the Neovim that started it"},
	{name: "undo", maxArgs: 1, tooMany: "undo takes at most one argument", json: true,
		noEditor: "undo restores the files on disk; reload or close their buffers first"},
	{name: "review", maxArgs: 1, tooMany: "review takes at most one run id", json: true,
		noEditor: "review changes the files on disk; reload or close their buffers first"},
	{name: "doctor", json: true, noEditor: "doctor checks the model backend and the check tools, not an editor"},
	{name: "tasks", json: true},
	{name: "version", noEditor: "version prints flow's version"},
	{name: "help", maxArgs: 1, tooMany: "help takes at most one command name"},
	// The task worker is started by flow serve (doc/design.md §10.10).
	{name: "task-worker", hidden: true, editor: true},
}

// lookupCommand returns the command named name, nil when there is none.
func lookupCommand(name string) *commandSpec {
	for i := range commandTable {
		if commandTable[i].name == name {
			return &commandTable[i]
		}
	}
	return nil
}

// commandNames lists the listed subcommands in a stable order.
func commandNames() []string {
	var names []string
	for _, c := range commandTable {
		if c.name != "" && !c.hidden {
			names = append(names, c.name)
		}
	}
	slices.Sort(names)
	return names
}

// commandsWhere lists, in table order, the listed commands for which keep
// holds, for the flags' complaints ("valid with run, check and status").
func commandsWhere(keep func(c *commandSpec) bool) []string {
	var names []string
	for i := range commandTable {
		c := &commandTable[i]
		if c.name != "" && !c.hidden && keep(c) {
			names = append(names, c.name)
		}
	}
	return names
}

// checkArgs holds the command's positional arguments to its arity.
func (c *commandSpec) checkArgs(o *options) error {
	n := len(o.args)
	switch {
	case c.needArgs != "" && n == 0 && !o.help:
		return usagef("%s", c.needArgs)
	case c.maxArgs >= 0 && n > c.maxArgs && c.tooMany != "":
		return usagef("%s", c.tooMany)
	case c.maxArgs >= 0 && n > c.maxArgs:
		return usagef("%s takes no arguments (got %q)", commandName(c.name), o.args[0])
	}
	return nil
}

// commandName names a command in a message: the TUI is "flow".
func commandName(c string) string {
	if c == "" {
		return "flow"
	}
	return c
}
