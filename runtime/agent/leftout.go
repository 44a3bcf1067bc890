package agent

import (
	"slices"
	"strings"

	"flow/runtime/codeblock"
	"flow/runtime/config"
	"flow/runtime/lang"
	"flow/runtime/verify/weakening"
)

// What a whole-file block leaves out (doc/design.md §6.7), and the
// classifier of test files that the guard (§8.6) shares.

// classifier knows the operator's test globs and the checks' argv.
func classifier(cfg *config.Config) weakening.Classifier {
	c := weakening.Classifier{Tests: cfg.Verify.Tests}
	for _, ch := range cfg.Checks {
		c.Checks = append(c.Checks, ch.Cmd)
	}
	return c
}

// leftOut names, as a phrase ("unique and the test \"sums\""), what a
// block given whole for existing file p leaves out that the task does not
// name: the file's top-level definitions (codeblock.LeftOut) and, in a
// test file, its tests as the guard counts them (§8.6); "" when nothing.
// Written, such a block deletes them: in the evaluation the 1.5B coder
// gave arrays.js with its new function alone and arrays.test.js with its
// new tests alone, the checks passed, and the guard then found the old
// test removed (doc/design.md §6.7). Told what it left out, the coder
// can give the file again before anything is written; a task that names
// a definition may delete it.
func (s *session) leftOut(p, prev, text string) string {
	var names []string
	for _, n := range codeblock.LeftOut(lang.Of(p), prev, text) {
		if !namesWord(s.r.task, n[strings.LastIndexByte(n, '.')+1:]) {
			names = append(names, n)
		}
	}
	findings := classifier(s.r.cfg).Detect(weakening.Change{Path: p, Before: []byte(prev), After: []byte(text), Existed: true, Exists: true})
	for _, f := range findings {
		if f.What != weakening.WhatTestRemoved || slices.Contains(names, f.Name) {
			continue
		}
		if t := strings.Trim(f.Name, "\"'`"); t != "" && strings.Contains(s.r.task, t) {
			continue
		}
		names = append(names, "the test "+f.Name)
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// namesWord reports whether text holds name as a word of its own.
func namesWord(text, name string) bool {
	for i := 0; name != ""; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(name)
		if (at == 0 || !isWordByte(text[at-1])) && (end == len(text) || !isWordByte(text[end])) {
			return true
		}
		i = at + 1
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
