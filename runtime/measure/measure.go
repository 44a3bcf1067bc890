// Package measure measures the configured reviewer (doc/design.md §8.10):
// flow's own pipeline runs each labelled change shipped in the binary, a
// scripted coder making the case's change and the configured reviewer,
// on its own server and model, judging it; its verdicts against the
// labels give trust (wrong changes rejected) and approval (correct
// changes approved). The result is kept per server, model and reviewer
// prompt in flow's state (Store), and every run's report and status show
// it.
package measure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"flow/bufferfs"
	"flow/internal/text"
	"flow/runtime/agent"
	"flow/runtime/config"
	"flow/runtime/model"
	"flow/runtime/report"
)

// Verdicts of a result.
const (
	VerdictApproved = "approved"
	VerdictRejected = "rejected"
	VerdictNone     = "none"
)

// Result is one case's outcome. A case is judged when the reviewer gave a
// verdict; otherwise NotJudged says why (the change was not made, the
// reviewer's server failed or gave no verdict) and it does not count.
type Result struct {
	Case      string `json:"case"` // TASK/CASE
	Label     string `json:"label"`
	Judged    bool   `json:"judged"`
	Verdict   string `json:"verdict"`
	NotJudged string `json:"not_judged,omitempty"`
	// Issue is the reviewer's first issue, or its summary.
	Issue  string `json:"issue,omitempty"`
	WallMS int64  `json:"wall_ms"`
}

// Right reports whether a judged result agrees with its label.
func (r Result) Right() bool {
	return r.Judged && (r.Label == LabelWrong) == (r.Verdict == VerdictRejected)
}

// Options are a measurement's collaborators.
type Options struct {
	// Config is the operator's configuration: the reviewer's server,
	// model and agent settings come from it.
	Config *config.Config
	// Reviewer is the client of the reviewer's server.
	Reviewer model.Backend
	// Cases are the cases to run; nil runs the embedded ones.
	Cases []Case
	// Scratch is where each case's workspace is made ("" is the system's
	// temporary directory); each is removed after its case.
	Scratch string
	// Progress, when set, is called before each case (done false) and
	// after it.
	Progress func(i, n int, c Case, r *Result)
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// The scripted servers of the planner and the coder in a case's run.
const (
	plannerServer = "measure-planner"
	coderServer   = "measure-coder"
)

// Run measures the reviewer on every case: it returns the figures and the
// cases' results. An error is returned only when no case could be run at
// all (the cases do not load); ctx's cancellation stops between cases and
// returns what was measured so far with ctx's error.
func Run(ctx context.Context, o Options) (report.ReviewerMeasured, []Result, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	cases := o.Cases
	if cases == nil {
		var err error
		if cases, err = Cases(); err != nil {
			return report.ReviewerMeasured{}, nil, err
		}
	}
	_, srv, _ := o.Config.ServerFor(config.RoleReviewer)
	var results []Result
	for i, c := range cases {
		if err := ctx.Err(); err != nil {
			return Summarize(results, srv.BaseURL, now()), results, err
		}
		if o.Progress != nil {
			o.Progress(i, len(cases), c, nil)
		}
		r := runCase(ctx, o, c)
		results = append(results, r)
		if o.Progress != nil {
			o.Progress(i, len(cases), c, &r)
		}
	}
	return Summarize(results, srv.BaseURL, now()), results, ctx.Err()
}

// runCase runs one case in a workspace of its own.
func runCase(ctx context.Context, o Options, c Case) Result {
	res := Result{Case: c.ID(), Label: c.Label, Verdict: VerdictNone}
	dir, err := os.MkdirTemp(o.Scratch, "flow-measure-")
	if err != nil {
		res.NotJudged = "cannot make the case's workspace: " + err.Error()
		return res
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "workspace")
	cfg, err := caseConfig(o.Config, c, dir, ws)
	if err != nil {
		res.NotJudged = "cannot set up the case: " + err.Error()
		return res
	}
	disk, err := bufferfs.NewDisk(cfg.Workspace, bufferfs.DiskOptions{Trusted: true})
	if err != nil {
		res.NotJudged = "cannot open the case's workspace: " + err.Error()
		return res
	}
	defer disk.Close()
	svc := agent.NewService(cfg, agent.ServiceOptions{
		FS: disk, Backend: o.Reviewer,
		Servers: map[string]model.Backend{
			plannerServer: &script{answer: "1. Make the change the task asks for.", real: o.Reviewer},
			coderServer:   &script{answer: c.Answer(), real: o.Reviewer},
		},
		ReplayChecks: passed,
	})
	start := time.Now()
	rp := svc.Run(ctx, c.Task.Text, nil)
	res.WallMS = time.Since(start).Milliseconds()
	return judge(res, rp, c)
}

// passed is every check's recorded outcome: each case's change passes
// its task's checks, which eval/harness's TestReviewerCases shows with the
// real commands, so the reviewer is asked as in a run whose checks passed.
func passed(config.Check) (string, string) { return report.StatusOK, "" }

// judge reads the reviewer's verdict from a case's run.
func judge(res Result, rp report.Run, c Case) Result {
	var reviewer *report.Role
	for i := range rp.Roles {
		if rp.Roles[i].Role == config.RoleReviewer {
			reviewer = &rp.Roles[i]
		}
	}
	switch {
	case len(rp.ChangedFiles) != len(c.Files):
		res.NotJudged = fmt.Sprintf("the case's change was not made (changed %v): %s", rp.ChangedFiles, text.OneLine(rp.Reason, 200))
	case reviewer == nil || reviewer.Status == report.StatusSkipped:
		res.NotJudged = "the reviewer was not asked: " + text.OneLine(rp.Reason, 200)
	case reviewer.Approved == nil:
		why := reviewer.Error
		if why == "" {
			why = rp.Reason
		}
		res.NotJudged = "the reviewer gave no verdict: " + text.OneLine(why, 200)
	default:
		res.Judged = true
		res.Verdict = VerdictRejected
		if *reviewer.Approved {
			res.Verdict = VerdictApproved
		}
		res.Issue = text.OneLine(reviewer.Summary, 160)
		if len(reviewer.Issues) > 0 {
			res.Issue = text.OneLine(reviewer.Issues[0], 160)
		}
	}
	return res
}

// caseConfig is a case's configuration: its task's checks over a fresh
// copy of its project in ws; the operator's reviewer (server, model,
// agent settings) as the default server; the planner and the coder on the
// scripted servers; the whole-file format and one cycle; and a change
// judged on its checks alone (behaviour_preserving), so that the
// reviewer is asked whenever they pass, as in make eval-reviewer: the
// reviewer, not the evidence rule, is what is measured.
func caseConfig(user *config.Config, c Case, dir, ws string) (*config.Config, error) {
	for _, f := range c.Task.Project {
		p := filepath.Join(ws, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(f.Text), 0o644); err != nil {
			return nil, err
		}
	}
	file := filepath.Join(dir, "flow.toml")
	if err := os.WriteFile(file, []byte(c.Task.Config), 0o644); err != nil {
		return nil, err
	}
	cfg, err := config.Load(config.LoadOptions{ConfigFile: file, Cwd: ws, Trusted: true, Getenv: func(string) string { return "" }})
	if err != nil {
		return nil, err
	}
	_, srv, ok := user.ServerFor(config.RoleReviewer)
	if !ok {
		return nil, errors.New("the reviewer's server is not configured")
	}
	srv.Model = user.ModelFor(config.RoleReviewer)
	cfg.Ollama = srv
	cfg.Servers = []config.Server{config.NewServer(plannerServer, config.Ollama{Model: srv.Model}), config.NewServer(coderServer, config.Ollama{Model: srv.Model})}
	cfg.Roles = []config.Role{{Name: config.RolePlanner, Server: plannerServer}, {Name: config.RoleCoder, Server: coderServer}}
	cfg.Models = config.Models{}
	cfg.Agent = user.Agent
	cfg.Agent.Planner = config.PlannerAuto
	cfg.Agent.MaxCycles = 1
	cfg.Agent.EditFormat = config.EditWhole
	cfg.Agent.AnswerCode = false
	cfg.Agent.Transcript = false
	cfg.Verify.BehaviourPreserving = true
	cfg.Verify.RequireFailingFirst = false
	return cfg, nil
}

// Summarize computes the figures of results, measured at at on the
// server at baseURL.
func Summarize(results []Result, baseURL string, at time.Time) report.ReviewerMeasured {
	m := report.ReviewerMeasured{At: at.UTC().Format(time.RFC3339), BaseURL: baseURL, Cases: len(results)}
	for _, r := range results {
		if !r.Judged {
			continue
		}
		m.Judged++
		if r.Label == LabelWrong {
			m.Wrong++
			if r.Verdict == VerdictRejected {
				m.Rejected++
			}
		} else {
			m.Correct++
			if r.Verdict == VerdictApproved {
				m.Approved++
			}
		}
	}
	pct := func(n, d int) float64 {
		if d == 0 {
			return -1
		}
		return float64(n) * 100 / float64(d)
	}
	m.TrustPct, m.ApprovalPct = pct(m.Rejected, m.Wrong), pct(m.Approved, m.Correct)
	m.Discriminates = m.Wrong > 0 && m.Correct > 0 && m.TrustPct+m.ApprovalPct >= report.DiscriminatesAt
	m.Sentence = sentence(m)
	return m
}

// sentence says whether the reviewer tells right from wrong, with the
// numbers.
func sentence(m report.ReviewerMeasured) string {
	figures := fmt.Sprintf("trust %d/%d wrong changes rejected, approval %d/%d correct changes approved", m.Rejected, m.Wrong, m.Approved, m.Correct)
	switch {
	case m.Wrong == 0 || m.Correct == 0:
		return fmt.Sprintf("Too few cases were judged to tell (%d of %d; %s): see each case's reason and measure again.", m.Judged, m.Cases, figures)
	case m.Discriminates:
		return fmt.Sprintf("The reviewer tells right from wrong better than a verdict that ignores the change: %s, %.0f%% + %.0f%% = %.0f%% (at least %d%%).",
			figures, m.TrustPct, m.ApprovalPct, m.TrustPct+m.ApprovalPct, report.DiscriminatesAt)
	default:
		return fmt.Sprintf("The reviewer does not tell right from wrong better than a verdict that ignores the change: %s, %.0f%% + %.0f%% = %.0f%% (below %d%%); consider [verify] reviewer = \"advisory\" or a larger reviewer model.",
			figures, m.TrustPct, m.ApprovalPct, m.TrustPct+m.ApprovalPct, report.DiscriminatesAt)
	}
}

// script is a scripted role's server in a case's run: every call gets
// answer. It describes models as the reviewer's server does, so that the
// settings a run decides by the model (agent.tool_declarations = "auto")
// are decided as in a real run.
type script struct {
	answer string
	real   model.Backend
}

func (s *script) Chat(ctx context.Context, req model.Request) (model.Response, error) {
	return model.Response{Message: model.Message{Role: model.RoleAssistant, Content: s.answer}, DoneReason: "stop"}, nil
}

func (s *script) ShowModel(ctx context.Context, name string) (model.ModelInfo, error) {
	d, ok := s.real.(interface {
		ShowModel(context.Context, string) (model.ModelInfo, error)
	})
	if !ok {
		return model.ModelInfo{}, errors.New("the reviewer's server does not describe its models")
	}
	return d.ShowModel(ctx, name)
}
