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
	// review --list, --keep, --revert (doc/design.md §12.7).
	reviewList   bool
	keep, revert []string
	// doctor --reviewer: measure the reviewer (doc/design.md §8.10).
	measureReviewer bool
	version         bool
	help            bool
}

// usageError is a command-line error: exit 2 with `flow: <message>`.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// parseArgs implements the grammar of doc/design.md §1.1:
//
//	flow [COMMON...] [COMMAND [COMMON...] [ARGS...]]
//
// Common flags are accepted anywhere before "--"; when a flag is given twice
// the later occurrence wins. The commands are the table in commands.go, the
// flags the table in flags.go; this function only walks the words.
func parseArgs(argv []string) (*options, error) {
	o := &options{editorTimeout: 120}
	onlyArgs := false
	var given []*flagSpec
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		switch {
		case onlyArgs || a == "-" || !strings.HasPrefix(a, "-"):
			if err := o.positional(a, onlyArgs); err != nil {
				return nil, err
			}
		case a == "--":
			onlyArgs = true
		default:
			f, next, err := o.flag(argv, i)
			if err != nil {
				return nil, err
			}
			given, i = append(given, f), next
		}
	}
	return o, o.check(given)
}

// positional takes a word that is not a flag: the command when none was
// named yet, an argument of the command otherwise.
func (o *options) positional(a string, onlyArgs bool) error {
	if o.command != "" || onlyArgs {
		o.args = append(o.args, a)
		return nil
	}
	if lookupCommand(a) == nil {
		if near := config.Suggest(a, commandNames()); near != "" {
			return usagef("unknown command %q: did you mean %q? (see flow help)", a, near)
		}
		return usagef("unknown command %q (see flow help)", a)
	}
	o.command = a
	return nil
}

// flag applies the flag at argv[i] (and its value, when it takes one and
// was not written --flag=VALUE) and returns it with the index of the last
// word it used.
func (o *options) flag(argv []string, i int) (*flagSpec, int, error) {
	name, value, hasValue := strings.Cut(argv[i], "=")
	f := lookupFlag(name)
	if f == nil {
		return nil, i, usagef("unknown flag %s (see flow help)", name)
	}
	switch {
	case f.value == "" && hasValue:
		return nil, i, usagef("flag %s takes no value", name)
	case f.value != "" && !hasValue:
		if i+1 >= len(argv) {
			return nil, i, usagef("flag %s needs a value", name)
		}
		i++
		value = argv[i]
	}
	return f, i, f.set(o, value)
}

// check applies the rules that need the whole command line: the command's
// arguments, then every given flag's rule about the command.
func (o *options) check(given []*flagSpec) error {
	if err := lookupCommand(o.command).checkArgs(o); err != nil {
		return err
	}
	for _, f := range slices.Compact(sortedFlags(given)) {
		if f.validWith == nil {
			continue
		}
		if err := f.validWith(o); err != nil {
			return err
		}
	}
	return nil
}

// sortedFlags returns the given flags in table order, so that the first
// complaint does not depend on the order they were typed in.
func sortedFlags(given []*flagSpec) []*flagSpec {
	out := slices.Clone(given)
	slices.SortFunc(out, func(a, b *flagSpec) int { return a.order - b.order })
	return out
}

// parseEditorTimeout reads --editor-timeout's seconds.
func parseEditorTimeout(v string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0.1 || f > 660 {
		return 0, usagef("--editor-timeout must be between 0.1 and 660 seconds")
	}
	return f, nil
}

// validModule refuses an --editor-module that is not a Lua module name.
func validModule(name string) error {
	if !plugin.ValidModuleName(name) {
		return usagef("--editor-module must be a Lua module name such as rose.tools")
	}
	return nil
}
