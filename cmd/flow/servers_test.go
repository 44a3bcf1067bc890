package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
)

// roleNow finds the role a request's prompt is for: each role's message
// ends with its instructions, "Your role now: the ROLE.".
var roleNow = regexp.MustCompile(`Your role now: the (planner|coder|reviewer)\.`)

// requestLog is a server's request log as the closing note shows it: one
// line per request, the path, the model and the role of the prompt.
func requestLog(name string, srv *ollamatest.Server) (lines, roles []string) {
	for _, r := range srv.Requests() {
		line := fmt.Sprintf("%s %s %s", name, r.Method, r.Path)
		if m, ok := r.Body["model"].(string); ok {
			line += " model=" + m
		}
		if msgs, ok := r.Body["messages"].([]any); ok && len(msgs) > 1 {
			content, _ := msgs[1].(map[string]any)["content"].(string)
			role := "?"
			if m := roleNow.FindStringSubmatch(content); m != nil {
				role = m[1]
			}
			roles = append(roles, role)
			line += " role=" + role
		}
		lines = append(lines, line)
	}
	return lines, roles
}

// twoServers writes a configuration whose planner and coder use [ollama]
// at local and whose reviewer uses [servers.gpu] at gpu, an
// OpenAI-compatible server (llama-server's API) with its own model.
func twoServers(t *testing.T, ws, local, gpu string) string {
	return goConfig(t, ws, local, `
[servers.gpu]
base_url = `+tomlString(gpu)+`
api = "openai"
model = "big-reviewer"
context_length = 8192

[roles.reviewer]
server = "gpu"
`)
}

// TestRunTwoServers runs `flow run` with the planner and coder on one
// scripted server and the reviewer on another: each server's request log
// holds its roles' prompts and nothing else, the reviewer's context window
// is asked of its own server (llama-server's GET /props), and the report
// says each role's server.
func TestRunTwoServers(t *testing.T) {
	t.Parallel()
	ws := calcModule(t)
	local := ollamatest.New(t,
		ollamatest.Turn{Content: "Plan: make Add add."},
		edit("c1", "return a - b", "return a + b"),
		ollamatest.Turn{Content: "Fixed."},
	)
	gpu := ollamatest.New(t, ollamatest.Turn{Content: approve})
	gpu.SetOpenAIOnly(true)
	gpu.SetSlotContext(8192)

	r := runFlow(t, ws, goEnv(t), "run", "--trusted", "-c", twoServers(t, ws, local.URL, gpu.URL), "fix Add")
	m := decode(t, r)
	if r.code != 0 || m["status"] != "ok" || m["verified"] != true {
		t.Fatalf("flow run = %d %v\nstderr: %s", r.code, m, r.stderr)
	}
	localLog, localRoles := requestLog("server A "+local.URL, local)
	gpuLog, gpuRoles := requestLog("server B "+gpu.URL, gpu)
	t.Logf("request logs:\n%s\n%s", strings.Join(localLog, "\n"), strings.Join(gpuLog, "\n"))
	if !slices.Equal(localRoles, []string{"planner", "coder", "coder"}) {
		t.Errorf("server A's prompts were for %v, want the planner's and the coder's two", localRoles)
	}
	if !slices.Equal(gpuRoles, []string{"reviewer"}) {
		t.Errorf("server B's prompts were for %v, want the reviewer's only", gpuRoles)
	}
	for _, c := range local.Chats() {
		if c.Body["model"] != "qwen2.5-coder:7b" || c.Path != "/api/chat" {
			t.Errorf("server A got %s with model %v, want /api/chat with ollama.model", c.Path, c.Body["model"])
		}
	}
	for _, c := range gpu.Chats() {
		if c.Body["model"] != "big-reviewer" || c.Path != "/v1/chat/completions" || c.Format() == nil {
			t.Errorf("server B got %s with model %v (format %s), want the structured verdict request to big-reviewer on /v1", c.Path, c.Body["model"], c.Format())
		}
	}
	if !slices.ContainsFunc(gpuLog, func(l string) bool { return strings.HasSuffix(l, "GET /props") }) {
		t.Errorf("server B was not asked for its window (GET /props): %v", gpuLog)
	}
	if slices.ContainsFunc(localLog, func(l string) bool { return strings.Contains(l, "/v1/") || strings.Contains(l, "/props") }) {
		t.Errorf("server A got the reviewer's window probe: %v", localLog)
	}
	if local.Unexpected() != 0 || gpu.Unexpected() != 0 {
		t.Errorf("unexpected model calls: A %d, B %d", local.Unexpected(), gpu.Unexpected())
	}
	servers := map[string]string{}
	for _, x := range m["roles"].([]any) {
		role := x.(map[string]any)
		servers[role["role"].(string)] = fmt.Sprint(role["server"], " ", role["model"])
	}
	want := map[string]string{"planner": "ollama qwen2.5-coder:7b", "coder": "ollama qwen2.5-coder:7b", "reviewer": "gpu big-reviewer"}
	for role, w := range want {
		if servers[role] != w {
			t.Errorf("report role %s: server and model %q, want %q", role, servers[role], w)
		}
	}

	st := decode(t, runFlow(t, ws, goEnv(t), "status", "-c", twoServers(t, ws, local.URL, gpu.URL)))
	models := st["models"].(map[string]any)
	if s := models["servers"].(map[string]any); models["reviewer"] != "big-reviewer" || s["reviewer"] != "gpu" || s["coder"] != "ollama" {
		t.Errorf("status models = %v, want the reviewer's big-reviewer on gpu, the coder on ollama", models)
	}
}

// TestRunMissingServer: a role naming a server no table defines is a
// configuration error (exit 2) that names the role and the server, and no
// server is contacted.
func TestRunMissingServer(t *testing.T) {
	t.Parallel()
	ws := calcModule(t)
	local := ollamatest.New(t)
	cfg := goConfig(t, ws, local.URL, "\n[roles.reviewer]\nserver = \"gpu\"\n")
	for _, cmd := range [][]string{{"run", "--trusted", "-c", cfg, "fix Add"}, {"doctor", "-c", cfg}, {"status", "-c", cfg}} {
		r := runFlow(t, ws, hermeticEnv(t), cmd...)
		want := `roles.reviewer.server names the server "gpu", which is not defined: the reviewer's requests would have nowhere to go; add a [servers.gpu] table`
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, want) {
			t.Errorf("flow %s = %d, stdout %q, stderr %q; want 2 and %q", cmd[0], r.code, r.stdout, r.stderr, want)
		}
		if cmd[0] == "run" {
			t.Logf("flow run's error: %s", strings.TrimSpace(r.stderr))
		}
	}
	if n := len(local.Requests()); n != 0 {
		t.Errorf("the server got %d requests, want none", n)
	}
}

// TestDoctorTwoServers: doctor checks every server a role uses, each line
// naming its roles, and each model on its own server.
func TestDoctorTwoServers(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	local := ollamatest.New(t)
	local.SetModels("qwen2.5-coder:7b")
	local.SetCapabilities("qwen2.5-coder:7b", "completion", "tools")
	gpu := ollamatest.New(t)
	gpu.SetModels("other")
	gpu.SetOpenAIOnly(true)
	cfg := twoServers(t, ws, local.URL, gpu.URL)

	r := runFlow(t, ws, hermeticEnv(t), "doctor", "-c", cfg)
	m := decode(t, r)
	servers := m["servers"].([]any)
	if len(servers) != 2 {
		t.Fatalf("doctor servers = %v, want two", servers)
	}
	for i, want := range []string{"ollama " + local.URL + " [planner coder] ok", "gpu " + gpu.URL + " [reviewer] ok"} {
		s := servers[i].(map[string]any)
		if got := fmt.Sprint(s["name"], " ", s["base_url"], " ", s["roles"], " ", s["status"]); got != want {
			t.Errorf("doctor server %d = %q, want %q", i, got, want)
		}
	}
	// The reviewer's model is looked for on its own server, which lacks it.
	var reviewer map[string]any
	for _, x := range m["models"].([]any) {
		if x.(map[string]any)["server"] == "gpu" {
			reviewer = x.(map[string]any)
		}
	}
	if r.code != 1 || reviewer == nil || reviewer["model"] != "big-reviewer" || reviewer["status"] != "unavailable" ||
		!strings.Contains(fmt.Sprint(reviewer["error"]), `the server does not list the model "big-reviewer" (GET /v1/models lists other)`) {
		t.Errorf("doctor = %d, reviewer's model %v; want 1 and big-reviewer unavailable on gpu", r.code, reviewer)
	}
	if slices.ContainsFunc(local.Requests(), func(x ollamatest.Recorded) bool {
		return strings.Contains(fmt.Sprint(x.Body["model"], x.Body["name"]), "big-reviewer")
	}) {
		t.Errorf("server A was asked about the reviewer's model")
	}

	// A warning about a model of another server says which server and
	// whose model: here an Ollama whose model is shorter than the window.
	gpu2 := ollamatest.New(t)
	gpu2.SetModels("big-reviewer")
	gpu2.SetCapabilities("big-reviewer", "completion", "tools")
	gpu2.SetContextLength("big-reviewer", 4096)
	cfg2 := strings.Replace(readFile(t, twoServers(t, ws, local.URL, gpu2.URL)), `api = "openai"`, `api = "native"`, 1)
	m = decode(t, runFlow(t, ws, hermeticEnv(t), "doctor", "-c", writeFile(t, t.TempDir(), "native.toml", cfg2)))
	want := "[servers.gpu] (reviewer): context_length 8192 exceeds the context length of big-reviewer (4096 tokens)"
	if !slices.ContainsFunc(m["warnings"].([]any), func(w any) bool { return strings.HasPrefix(fmt.Sprint(w), want) }) {
		t.Errorf("doctor warnings = %v, want one starting %q", m["warnings"], want)
	}

	out, _ := runFlowTTY(t, ws, hermeticEnv(t, "NO_COLOR=1"), "doctor", "-c", cfg)
	t.Logf("flow doctor:\n%s", out)
	for _, want := range []string{
		"✓ ollama " + local.URL + " (native) · version",
		"for planner, coder\n",
		"✓ gpu " + gpu.URL + " (openai) for reviewer\n",
		"✓ qwen2.5-coder:7b (planner, coder on ollama)",
		"✗ big-reviewer (reviewer on gpu)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
}

// readFile returns the text of path.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
