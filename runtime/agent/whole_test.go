package agent

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/codeblock"
	"flow/runtime/config"
	"flow/runtime/model"
	"flow/runtime/report"
)

// TestWholeFileFormat: with agent.edit_format = "whole" the coder is told
// to answer with each changed file whole, and the host writes the blocks
// named by a path with file_write: the run verifies on its check without
// any tool call of the model's. A block that leaves code out, or a file
// over the size bound, is refused with the reason, and the coder goes on.
// With the format off (tools), the same answer changes nothing.
func TestWholeFileFormat(t *testing.T) {
	const fixed = "package a\n\nvar fixed int\n\nfunc Keep() {}\n"
	answer := "Here is the fix.\n\na.go\n```go\n" + fixed + "```\n"
	for _, format := range []string{config.EditWhole, config.EditTools} {
		t.Run(format, func(t *testing.T) {
			dir := workspace(t, map[string]string{"a.go": "package a\n\nvar broken int\n\nfunc Keep() {}\n"})
			cfg := testConfig(dir, goLint())
			cfg.Agent.Planner = config.PlannerAuto
			cfg.Agent.EditFormat = format
			cfg.Agent.AnswerCode = false
			be := newScripted(t, say(answer), say("Nothing else."), say(verdict(true, "ok")))
			h := newHarness(t, cfg, be)
			rep := h.run(t, "fix a.go")
			msgs := be.requests()[0].Messages
			coderMsg := msgs[len(msgs)-1].Content
			if rep.EditFormat == nil || rep.EditFormat.Format != format || rep.EditFormat.Why != `agent.edit_format = "`+format+`"` {
				t.Errorf("report edit_format = %+v, want %s from the configuration", rep.EditFormat, format)
			}
			if format == config.EditTools {
				if got := h.read(t, "a.go"); strings.Contains(got, "fixed") || rep.Verified {
					t.Errorf("tools format: a.go = %q, verified %t; want the answer's block left alone", got, rep.Verified)
				}
				if strings.Contains(coderMsg, "then the whole file in a fenced code block") {
					t.Errorf("tools format: the coder was told to give files whole")
				}
				return
			}
			checkWholeOpening(t, msgs, "a.go\n```go\npackage a\n\nvar broken int\n", "fix a.go")
			ins, _ := policy{role: config.RoleCoder, whole: true}.instructions()
			if sys := msgs[0].Content; sys != systemPrompt()+"\n"+strings.TrimSpace(ins)+"\n" ||
				!strings.Contains(sys, "the file's path on a line of its own, then the whole file in a fenced code block") {
				t.Errorf("the system message is not the shared prompt and then the whole-file instructions:\n%s", sys)
			}
			if strings.Contains(coderMsg, "How to work:") {
				t.Errorf("the coder's message holds the instructions again:\n%s", coderMsg)
			}
			if got := h.read(t, "a.go"); got != fixed {
				t.Errorf("a.go = %q, want the answer's block", got)
			}
			if rep.Status != report.StatusOK || !rep.Verified || rep.Roles[1].Turns != 1 {
				t.Errorf("Run() = %s verified %t, coder %+v; want ok, verified, the coder done after one turn", rep.Status, rep.Verified, rep.Roles[1])
			}
			var writes int
			for _, e := range rep.Events {
				if e.Tool == "file_write" && e.Status == report.StatusOK && e.FromText {
					writes++
				}
			}
			if writes != 1 || rep.ToolCalls != 1 {
				t.Errorf("%d file_write events from the answer, %d tool calls; want 1 and 1", writes, rep.ToolCalls)
			}
		})
	}
}

// TestWholeFileRefusals: blocks the host will not write are answered with
// the reason, and the coder gets another turn.
func TestWholeFileRefusals(t *testing.T) {
	big := "package a\n\n" + strings.Repeat("// padding line for a large file\n", 300)
	tests := []struct {
		name, answer, want string
	}{
		{"elided", "a.go\n```go\npackage a\n\n// ... rest of the file unchanged\n```\n", "leaves code out"},
		{"too large", "big.go\n```go\npackage a\n\nvar x int\n```\n", "larger than 8000 bytes, too large to write whole"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := workspace(t, map[string]string{"a.go": "package a\n\nvar broken int\n", "big.go": big})
			cfg := testConfig(dir, goLint())
			cfg.Agent.Planner = config.PlannerAuto
			cfg.Agent.EditFormat = config.EditWhole
			cfg.Agent.BriefChars = 20000 // every file in the brief: no planner
			fixedA := "a.go\n```go\npackage a\n\nvar fixed int\n```\n"
			be := newScripted(t, say(tc.answer), say(fixedA), say(verdict(true, "ok")))
			h := newHarness(t, cfg, be)
			rep := h.run(t, "fix a.go")
			reqs := be.requests()
			if len(reqs) < 2 {
				t.Fatalf("%d requests, want the coder asked again", len(reqs))
			}
			msgs := toolMessages(reqs[1])
			if len(msgs) != 1 || !strings.Contains(msgs[0].Content, tc.want) {
				t.Errorf("the coder's next turn sees %+v, want the refusal %q", msgs, tc.want)
			}
			if got := h.read(t, "big.go"); got != big {
				t.Errorf("big.go was written")
			}
			if got := h.read(t, "a.go"); got != "package a\n\nvar fixed int\n" || !rep.Verified {
				t.Errorf("a.go = %q, verified %t; want the second answer written and verified", got, rep.Verified)
			}
		})
	}
}

// TestWholeFileEchoNamed: a whole-file block that is the file as it
// already is changes nothing, and the reminder names the file given back.
func TestWholeFileEchoNamed(t *testing.T) {
	const broken = "package a\n\nvar broken int\n"
	dir := workspace(t, map[string]string{"a.go": broken})
	cfg := testConfig(dir, goLint())
	cfg.Agent.Planner = config.PlannerAuto
	cfg.Agent.EditFormat = config.EditWhole
	echo := "The fix:\n\na.go\n```go\n" + broken + "```\n"
	be := newScripted(t, say(echo), say("a.go\n```go\npackage a\n\nvar fixed int\n```\n"), say(verdict(true, "ok")))
	rep := newHarness(t, cfg, be).run(t, "fix a.go")
	if !rep.Verified || be.left() != 0 {
		t.Fatalf("Run() = %s verified=%v (%s), %d left; want verified after the reminder", rep.Status, rep.Verified, rep.Reason, be.left())
	}
	msgs := be.requests()[1].Messages
	want := withEchoes(noChangeMessage(policy{whole: true}, []string{"lint"}), []codeblock.Echo{{Path: "a.go"}}) + "\n\nNow: do this task:\nfix a.go\n\n" + wholeReminder
	if last := msgs[len(msgs)-1].Content; last != want {
		t.Errorf("reminder = %q, want %q", last, want)
	}
	if !strings.Contains(want, "The file it gives for a.go is what the file already holds, word for word") {
		t.Errorf("the reminder does not name the file given back: %q", want)
	}
}

// TestEditFormatAuto: "auto" gives a model the server says cannot call
// tools the whole-file format, and tool calls otherwise, whatever its size
// (doc/design.md §6.7).
func TestEditFormatAuto(t *testing.T) {
	tests := []struct {
		name, size string
		caps       []string
		want, why  string
	}{
		{"a 1.5B model that calls tools", "1.5B", []string{"completion", "tools"}, config.EditTools, "(1.5B parameters) calls tools"},
		{"a 7.6B model that calls tools", "7.6B", []string{"completion", "tools"}, config.EditTools, "(7.6B parameters) calls tools"},
		{"a 1.5B model without tool calling", "1.5B", []string{"completion"}, config.EditWhole, "(1.5B parameters) has no tool calling"},
		{"the server does not say", "", []string{}, config.EditTools, "does not say whether"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(workspace(t, map[string]string{"a.go": "package a\n"}))
			cfg.Agent.Planner = config.PlannerAuto
			srv := ollamatest.New(t, ollamatest.Turn{Content: "No change needed."}, ollamatest.Turn{Content: "Nothing."})
			describeModel(srv, cfg.Ollama.Model, tc.size, tc.caps)
			h := newHarness(t, cfg, ollamaBackend(t, srv, cfg))
			rep := h.run(t, "look at a.go")
			if rep.EditFormat == nil || rep.EditFormat.Format != tc.want || !strings.Contains(rep.EditFormat.Why, tc.why) {
				t.Errorf("edit_format = %+v, want %s because it %s", rep.EditFormat, tc.want, tc.why)
			}
			user := lastMessage(chatRequests(srv)[0])["content"].(string)
			if whole := strings.Contains(user, "then the whole file in a fenced code block"); whole != (tc.want == config.EditWhole) {
				t.Errorf("the coder was told whole files = %t, want %t", whole, tc.want == config.EditWhole)
			}
		})
	}
}

// describeModel makes srv describe model in /api/show: listed, with size
// ("1.5B") and capabilities when given; nil caps leaves the server's
// default description.
func describeModel(srv *ollamatest.Server, model, size string, caps []string) {
	srv.SetModels(model)
	if size != "" {
		srv.SetParameterSize(model, size)
	}
	if caps != nil {
		srv.SetCapabilities(model, caps...)
	}
}

// checkWholeOpening checks a whole-file coder's first request (doc/design.md
// §6.7): the system prompt, the worked example as a request and an answer,
// the files in a user turn of their own, each under its path alone (file
// holds one such listing), acknowledged, then the message that begins with
// the task and no longer holds the files.
func checkWholeOpening(t *testing.T, msgs []model.Message, file, task string) {
	t.Helper()
	roles := make([]string, len(msgs))
	for i, m := range msgs {
		roles[i] = m.Role
	}
	want := []string{model.RoleSystem, model.RoleUser, model.RoleAssistant, model.RoleUser, model.RoleAssistant, model.RoleUser}
	if !slices.Equal(roles, want) {
		t.Fatalf("the whole-file coder's request has the roles %v, want %v", roles, want)
	}
	request, answer := wholeExample()
	if msgs[1].Content != request || msgs[2].Content != answer || !strings.Contains(answer, "shapes.py\n```python\n") {
		t.Errorf("the example turns are %q and %q", msgs[1].Content, msgs[2].Content)
	}
	files := msgs[3].Content
	if !strings.HasPrefix(files, wholeExampleNext+"\n\nSource files") || !strings.Contains(files, "\n"+file) || strings.Contains(files, briefHeading) {
		t.Errorf("the files turn does not list %q under its path alone:\n%s", file, files)
	}
	if msgs[4].Content != wholeFilesAck {
		t.Errorf("the files are acknowledged with %q", msgs[4].Content)
	}
	last := msgs[5].Content
	if !strings.HasPrefix(last, "Task:\n"+task+"\n"+roleSeparator) || strings.Contains(last, file) {
		t.Errorf("the coder's message does not begin with the task alone, or holds the files again:\n%s", last)
	}
	if !strings.HasSuffix(last, "\nNow: do this task:\n"+task+"\n\n"+wholeReminder+"\n") {
		t.Errorf("the coder's message does not end with the task and then the format:\n%s", last)
	}
}

// TestWholeExampleCopied: a block that is the worked example's own file,
// in a workspace without it, is refused with the reason and nothing is
// written; the coder's next answer is applied.
func TestWholeExampleCopied(t *testing.T) {
	_, answer := wholeExample()
	dir := workspace(t, map[string]string{"a.go": "package a\n\nvar broken int\n"})
	cfg := testConfig(dir, goLint())
	cfg.Agent.Planner = config.PlannerAuto
	cfg.Agent.EditFormat = config.EditWhole
	be := newScripted(t, say(answer), say("a.go\n```go\npackage a\n\nvar fixed int\n```\n"), say(verdict(true, "ok")))
	h := newHarness(t, cfg, be)
	rep := h.run(t, "fix a.go")
	if _, err := os.Stat(filepath.Join(dir, "shapes.py")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the example's file was written: %v", err)
	}
	msgs := be.requests()[1].Messages
	if got := msgs[len(msgs)-1].Content; !strings.Contains(got, "shapes.py is the example's file, from another project") {
		t.Errorf("the coder was not told why the example's file was refused:\n%s", got)
	}
	if !rep.Verified || h.read(t, "a.go") != "package a\n\nvar fixed int\n" {
		t.Errorf("Run() = %s verified %t; want the second answer applied and verified", rep.Status, rep.Verified)
	}
}

// TestWholeFileLeftOut: a whole-file block that leaves out definitions or
// tests the file has is refused once, naming them (a renamed variable is
// not left out), and nothing is written;
// the coder's next blocks, with everything kept, are written. A task that
// names a definition may drop it, and a block that leaves something out a
// second time is written (the checks and the guard judge it).
func TestWholeFileLeftOut(t *testing.T) {
	const (
		oldA    = "package a\n\nvar broken int\n\nfunc Keep() int { return 1 }\n"
		oldTest = "package a\n\nimport \"testing\"\n\nfunc TestKeep(t *testing.T) {\n\tif Keep() != 1 {\n\t\tt.Fatal(Keep())\n\t}\n}\n"
		onlyNew = "package a\n\nvar fixed int\n\nfunc Added() int { return 2 }\n"
		newTest = "package a\n\nimport \"testing\"\n\nfunc TestAdded(t *testing.T) {\n\tif Added() != 2 {\n\t\tt.Fatal(Added())\n\t}\n}\n"
		fullA   = "package a\n\nvar fixed int\n\nfunc Keep() int { return 1 }\n\nfunc Added() int { return 2 }\n"
	)
	fullTest := oldTest + "\nfunc TestAdded(t *testing.T) {\n\tif Added() != 2 {\n\t\tt.Fatal(Added())\n\t}\n}\n"
	block := func(p, text string) string { return p + "\n```go\n" + text + "```\n\n" }
	setup := func(t *testing.T, steps ...step) (*harness, *scripted) {
		dir := workspace(t, map[string]string{"a.go": oldA, "a_test.go": oldTest})
		cfg := testConfig(dir, goLint())
		cfg.Agent.Planner = config.PlannerAuto
		cfg.Agent.EditFormat = config.EditWhole
		cfg.Agent.BriefChars = 20000
		be := newScripted(t, steps...)
		return newHarness(t, cfg, be), be
	}

	t.Run("refused once, then kept", func(t *testing.T) {
		h, be := setup(t, say("Added.\n\n"+block("a.go", onlyNew)+block("a_test.go", newTest)),
			say(block("a.go", fullA)+block("a_test.go", fullTest)), say(verdict(true, "ok")))
		rep := h.run(t, "add Added to a.go, with a test")
		reqs := be.requests()
		if len(reqs) < 2 {
			t.Fatalf("%d requests, want the coder asked again", len(reqs))
		}
		msgs := toolMessages(reqs[1])
		if len(msgs) != 2 ||
			!strings.Contains(msgs[0].Content, "The block for a.go leaves out Keep, which the file has now") ||
			!strings.Contains(msgs[1].Content, "The block for a_test.go leaves out TestKeep, which the file has now") ||
			strings.Contains(msgs[1].Content, "the test TestKeep") {
			t.Errorf("the coder's next turn sees %+v, want both blocks refused, naming what they leave out once", msgs)
		}
		if got, gotTest := h.read(t, "a.go"), h.read(t, "a_test.go"); got != fullA || gotTest != fullTest || !rep.Verified {
			t.Errorf("a.go = %q, a_test.go = %q, verified %t (%s); want the second blocks written and verified", got, gotTest, rep.Verified, rep.Reason)
		}
		var refused, written int
		for _, e := range rep.Events {
			if e.Tool == "file_write" && e.Status == report.StatusOK {
				written++
			} else if e.Tool == "file_write" {
				refused++
			}
		}
		if refused != 2 || written != 2 {
			t.Errorf("%d refused and %d written file_write events, want 2 and 2", refused, written)
		}
	})

	t.Run("a JavaScript test", func(t *testing.T) {
		const oldJS = "import { test } from \"node:test\";\nimport { unique } from \"./arrays.js\";\n\ntest(\"unique keeps first occurrences\", () => {\n  unique([1]);\n});\n"
		const newJS = "import { test } from \"node:test\";\nimport { chunk } from \"./arrays.js\";\n\ntest(\"chunk splits\", () => {\n  chunk([1], 1);\n});\n"
		dir := workspace(t, map[string]string{"a.go": oldA, "arrays.test.js": oldJS})
		cfg := testConfig(dir, goLint())
		cfg.Agent.Planner = config.PlannerAuto
		cfg.Agent.EditFormat = config.EditWhole
		cfg.Agent.BriefChars = 20000
		be := newScripted(t, say("arrays.test.js\n```js\n"+newJS+"```\n"), say(block("a.go", fullA)), say(verdict(true, "ok")))
		h := newHarness(t, cfg, be)
		h.run(t, "add chunk with a test")
		msgs := toolMessages(be.requests()[1])
		if len(msgs) != 1 || !strings.Contains(msgs[0].Content, `The block for arrays.test.js leaves out the test \"unique keeps first occurrences\", which the file has now`) {
			t.Errorf("the coder's next turn sees %+v, want the block refused, naming the test", msgs)
		}
		if got := h.read(t, "arrays.test.js"); got != oldJS {
			t.Errorf("arrays.test.js = %q, want it as it was", got)
		}
	})

	t.Run("named by the task", func(t *testing.T) {
		renamed := "package a\n\nvar fixed int\n\nfunc Added() int { return 2 }\n"
		h, _ := setup(t, say(block("a.go", renamed)), say(verdict(true, "ok")))
		rep := h.run(t, "remove Keep and broken from a.go and add Added")
		if got := h.read(t, "a.go"); got != renamed || rep.Roles[1].Turns != 1 {
			t.Errorf("a.go = %q after %d coder turns, want the block written at once", got, rep.Roles[1].Turns)
		}
	})

	t.Run("the same again is written", func(t *testing.T) {
		drop := say(block("a.go", onlyNew))
		h, be := setup(t, drop, drop, say(verdict(true, "ok")))
		h.run(t, "add Added to a.go")
		if got := h.read(t, "a.go"); got != onlyNew || be.left() != 0 {
			t.Errorf("a.go = %q, %d steps left; want the second block written", got, be.left())
		}
	})
}
