package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"flow/plugin"
	"flow/runtime/config"
)

// commands lists every subcommand of doc/design.md §1.1.
var commands = map[string]bool{
	"run": true, "check": true, "status": true, "serve": true, "tui": true,
	"nvim": true, "undo": true, "doctor": true, "version": true, "help": true, "tasks": true,
}

// hiddenCommands are accepted but neither listed nor suggested: the task
// worker is started by flow serve (doc/design.md §10.10).
var hiddenCommands = map[string]bool{"task-worker": true}

// options are the parsed command line.
type options struct {
	command string   // "" = the TUI
	args    []string // positional arguments after the command

	configFile string
	workspace  string
	model      string
	modelSet   bool
	trusted    bool
	// behaviourPreserving: the task changes no behaviour (doc/design.md §8.7).
	behaviourPreserving bool
	nvim                string
	editorTimeout       float64
	editorModule        string // "": the command's default (serve: rose.tools, nvim: flow.tools)
	quiet               bool
	json                bool   // print the JSON report even on a terminal
	name                string // check --name
	version             bool
	help                bool
}

// usageError is a command-line error: exit 2 with `flow: <message>`.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// commandNames lists the subcommands in a stable order.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// parseArgs implements the grammar of doc/design.md §1.1:
//
//	flow [COMMON...] [COMMAND [COMMON...] [ARGS...]]
//
// Common flags are accepted anywhere before "--"; when a flag is given twice
// the later occurrence wins.
func parseArgs(argv []string) (*options, error) {
	o := &options{editorTimeout: 120}
	onlyArgs := false
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if onlyArgs || a == "-" || !strings.HasPrefix(a, "-") {
			if o.command == "" && !onlyArgs {
				if !commands[a] && !hiddenCommands[a] {
					if near := config.Suggest(a, commandNames()); near != "" {
						return nil, usagef("unknown command %q: did you mean %q? (see flow help)", a, near)
					}
					return nil, usagef("unknown command %q (see flow help)", a)
				}
				o.command = a
				continue
			}
			o.args = append(o.args, a)
			continue
		}
		if a == "--" {
			onlyArgs = true
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		needValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(argv) {
				return "", usagef("flag %s needs a value", name)
			}
			i++
			return argv[i], nil
		}
		noValue := func() error {
			if hasValue {
				return usagef("flag %s takes no value", name)
			}
			return nil
		}
		var err error
		switch name {
		case "--config", "-c":
			o.configFile, err = needValue()
			if err == nil && o.configFile == "" {
				err = usagef("--config needs a file name")
			}
		case "--workspace", "-w":
			o.workspace, err = needValue()
			if err == nil && o.workspace == "" {
				err = usagef("--workspace needs a directory")
			}
		case "--model", "-m":
			o.model, err = needValue()
			o.modelSet = true
			if err == nil && strings.TrimSpace(o.model) == "" {
				err = usagef("--model must be a nonempty model name")
			}
		case "--trusted":
			err = noValue()
			o.trusted = true
		case "--behaviour-preserving":
			err = noValue()
			o.behaviourPreserving = true
		case "--nvim":
			o.nvim, err = needValue()
			if err == nil && o.nvim == "" {
				err = usagef("--nvim needs the path of a Neovim socket")
			}
		case "--editor-timeout":
			var v string
			if v, err = needValue(); err == nil {
				o.editorTimeout, err = parseEditorTimeout(v)
			}
		case "--editor-module":
			o.editorModule, err = needValue()
			if err == nil && !plugin.ValidModuleName(o.editorModule) {
				err = usagef("--editor-module must be a Lua module name such as rose.tools")
			}
		case "--quiet", "-q":
			err = noValue()
			o.quiet = true
		case "--json":
			err = noValue()
			o.json = true
		case "--name":
			o.name, err = needValue()
		case "--version":
			err = noValue()
			o.version = true
		case "--help", "-h":
			err = noValue()
			o.help = true
		default:
			err = usagef("unknown flag %s (see flow help)", name)
		}
		if err != nil {
			return nil, err
		}
	}
	return o, checkArity(o)
}

func checkArity(o *options) error {
	n := len(o.args)
	switch o.command {
	case "run":
		if n == 0 && !o.help {
			return usagef("run needs a task: flow run TASK...")
		}
	case "check", "undo":
		if n > 1 {
			return usagef("%s takes at most one argument", o.command)
		}
	case "help":
		if n > 1 {
			return usagef("help takes at most one command name")
		}
	default:
		if n > 0 {
			return usagef("%s takes no arguments (got %q)", commandName(o.command), o.args[0])
		}
	}
	if o.json && !slices.Contains([]string{"run", "check", "status", "undo", "doctor", "tasks"}, o.command) {
		return usagef("--json is only valid with run, check, status, undo, doctor and tasks")
	}
	if err := checkEditorFlags(o); err != nil {
		return err
	}
	if o.name != "" && o.command != "check" {
		return usagef("--name is only valid with check")
	}
	if o.version && o.command != "" && o.command != "version" {
		return usagef("--version is not valid with %s", o.command)
	}
	return nil
}

// nvimCommands are the commands that honour --nvim: they work through the
// attached editor (buffer-aware reads and writes, checks refused over
// unsaved buffers, freshness, the editor in status reports).
var nvimCommands = []string{"run", "check", "status", "serve", "task-worker"}

// checkEditorFlags refuses --nvim where it cannot mean the editor: the flag
// promises that flow will not write over unsaved buffers, so a command
// that would ignore it must not accept it.
func checkEditorFlags(o *options) error {
	if o.nvim != "" && !slices.Contains(nvimCommands, o.command) && !o.help && o.command != "help" {
		cmd := o.command
		if o.version {
			cmd = "version"
		}
		why := map[string]string{
			"":        "the terminal UI works on the files on disk",
			"tui":     "the terminal UI works on the files on disk",
			"nvim":    "flow nvim talks to the Neovim that started it",
			"undo":    "undo restores the files on disk; reload or close their buffers first",
			"doctor":  "doctor checks the model backend and the check tools, not an editor",
			"version": "version prints flow's version",
		}[cmd]
		if why == "" {
			why = commandName(cmd) + " does not work through the editor"
		}
		return usagef("--nvim is only valid with run, check, status and serve: %s", why)
	}
	if o.editorModule != "" && o.nvim == "" && o.command != "nvim" {
		return usagef("--editor-module needs --nvim")
	}
	return nil
}

func commandName(c string) string {
	if c == "" {
		return "flow"
	}
	return c
}

func parseEditorTimeout(v string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0.1 || f > 660 {
		return 0, usagef("--editor-timeout must be between 0.1 and 660 seconds")
	}
	return f, nil
}
