package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Runner is one program the evaluation runs on every task × repetition: a
// build of flow, or the peer (aider).
type Runner struct {
	Label   string `json:"label"`
	Type    string `json:"type"` // runnerFlow or runnerAider
	Path    string `json:"path"`
	Version string `json:"version"`
	// Agent are extra [agent] settings of this build's runs, after -agent's
	// ("edit_format = \"whole\""), so that one binary can be compared
	// with itself under two settings.
	Agent string `json:"agent,omitempty"`
}

const (
	runnerFlow  = "flow"
	runnerAider = "aider"
)

var runnerLabel = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// ParseRunners reads -flow and -peer. flow is one binary ("bin/flow",
// labelled "flow") or comma-separated labelled binaries
// ("before=/tmp/flow-old,after=bin/flow"), each with optional [agent]
// settings after an @, ';'-separated
// (`tools=bin/flow@edit_format="tools",whole=bin/flow@edit_format="whole"`);
// it may be empty when there is a peer. peer is "" or "aider", run with the executable aiderPath. The order
// is the order of the runs within each task × repetition: the flow builds as
// given, then the peer.
func ParseRunners(flow, peer, aiderPath string) ([]Runner, error) {
	var out []Runner
	seen := map[string]bool{}
	if strings.TrimSpace(flow) != "" {
		items := strings.Split(flow, ",")
		for _, item := range items {
			item = strings.TrimSpace(item)
			label, path, labelled := strings.Cut(item, "=")
			if !labelled {
				if len(items) > 1 {
					return nil, fmt.Errorf("-flow %q: with several builds each needs a label (label=path)", flow)
				}
				label, path = runnerFlow, item
			}
			label, path = strings.TrimSpace(label), strings.TrimSpace(path)
			path, agent, _ := strings.Cut(path, "@")
			path = strings.TrimSpace(path)
			switch {
			case path == "":
				return nil, fmt.Errorf("-flow %q: no path for %q", flow, item)
			case !runnerLabel.MatchString(label):
				return nil, fmt.Errorf("-flow %q: the label %q must match %s", flow, label, runnerLabel)
			case seen[label]:
				return nil, fmt.Errorf("-flow %q: the label %q is given twice", flow, label)
			case peer != "" && label == peer:
				return nil, fmt.Errorf("-flow %q: the label %q is the peer's", flow, label)
			}
			seen[label] = true
			out = append(out, Runner{Label: label, Type: runnerFlow, Path: path, Agent: strings.TrimSpace(agent)})
		}
	}
	switch peer {
	case "":
	case runnerAider:
		if aiderPath == "" {
			return nil, fmt.Errorf("-peer aider needs -aider (the aider executable)")
		}
		out = append(out, Runner{Label: runnerAider, Type: runnerAider, Path: aiderPath})
	default:
		return nil, fmt.Errorf("-peer must be aider (the only peer) or empty, not %q", peer)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("nothing to run: -flow is empty and there is no -peer")
	}
	return out, nil
}

// absRunnerPaths makes each runner's path absolute and checks that it is
// an executable file.
func absRunnerPaths(rs []Runner) error {
	for i := range rs {
		a, err := filepath.Abs(rs[i].Path)
		if err != nil {
			return err
		}
		rs[i].Path = a
		st, err := os.Stat(a)
		if err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			continue
		}
		if rs[i].Type == runnerAider {
			return fmt.Errorf("no aider at %s: install it with scripts/aider-venv.sh (make eval-aider does), or pass -aider", a)
		}
		return fmt.Errorf("no flow binary at %s (%s): run `make build` or pass -flow", a, rs[i].Label)
	}
	return nil
}

// firstFlow is the first flow build, or nil when only the peer runs.
func firstFlow(rs []Runner) *Runner {
	for i := range rs {
		if rs[i].Type == runnerFlow {
			return &rs[i]
		}
	}
	return nil
}
