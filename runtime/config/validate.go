package config

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Limits of the check table (doc/design.md §15).
const (
	MaxChecks           = 32     // named checks
	MaxArgv             = 128    // elements of a check's cmd
	MaxCheckName        = 64     // characters of a check name
	MaxEnv              = 128    // names in a check's env allowlist
	DefaultCheckTimeout = 60000  // milliseconds
	MaxCheckTimeout     = 600000 // milliseconds
)

var (
	checkNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	envNameRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// intRange is an inclusive integer range.
type intRange struct{ min, max int64 }

func (r intRange) contains(v int64) bool { return v >= r.min && v <= r.max }

func (r intRange) message(key string) string {
	return fmt.Sprintf("%s must be an integer between %d and %d", key, r.min, r.max)
}

// floatRange is an inclusive range of finite numbers.
type floatRange struct{ min, max float64 }

// contains is false for NaN and the infinities.
func (r floatRange) contains(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= r.min && v <= r.max
}

func (r floatRange) message(key string) string {
	return fmt.Sprintf("%s must be a number between %s and %s", key, fmtNum(r.min), fmtNum(r.max))
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Ranges of the numeric keys.
var (
	temperatureRange   = floatRange{0, 2}
	modelTimeoutRange  = floatRange{0.1, 600}
	contextLengthRange = intRange{1024, 131072}
	checkTimeoutRange  = intRange{1, MaxCheckTimeout}
)

// agentFields describes the [agent] table; decoding and Validate share it.
var agentFields = []struct {
	name  string
	rng   intRange
	field func(*Agent) *int
}{
	{"max_iterations", intRange{1, 32}, func(a *Agent) *int { return &a.MaxIterations }},
	{"max_cycles", intRange{1, 5}, func(a *Agent) *int { return &a.MaxCycles }},
	{"max_tool_calls", intRange{1, 256}, func(a *Agent) *int { return &a.MaxToolCalls }},
	{"max_context_chars", intRange{4096, 1000000}, func(a *Agent) *int { return &a.MaxContextChars }},
	{"max_task_chars", intRange{1, 100000}, func(a *Agent) *int { return &a.MaxTaskChars }},
	{"brief_chars", intRange{0, 100000}, func(a *Agent) *int { return &a.BriefChars }},
}

// plannerMessage is the problem of a bad agent.planner.
const plannerMessage = `agent.planner must be "auto" (skip the planner when the brief holds every source file) or "always"`

func validPlanner(s string) bool { return s == PlannerAuto || s == PlannerAlways }

// editFormatMessage is the problem of a bad agent.edit_format.
const editFormatMessage = `agent.edit_format must be "auto" (whole files for a model the server says cannot call tools), "tools" (file_edit and file_write calls) or "whole" (the answer holds each changed file whole)`

func validEditFormat(s string) bool { return s == EditAuto || s == EditTools || s == EditWhole }

// toolDeclarationsMessage is the problem of a bad agent.tool_declarations.
const toolDeclarationsMessage = `agent.tool_declarations must be "auto" (text for a small model, as the server describes it), "native" (the request's tools field as well) or "text" (the system prompt's list alone)`

func validToolDeclarations(s string) bool {
	return s == ToolsAuto || s == ToolsNative || s == ToolsText
}

// checkKinds is the set of supported check kinds.
var checkKinds = map[string]bool{
	KindCheck: true, KindTest: true, KindLint: true,
	KindTypecheck: true, KindDiagnostics: true, KindBuild: true,
}

// Validate re-checks every value of an in-memory Config against the same
// rules Load applies, for Configs built by code (tests, editor options). It
// returns nil or an *[Error] listing every problem. It does not look at the
// file system: Workspace is not checked.
func (c *Config) Validate() error {
	p := validateOllama("ollama", &c.Ollama)
	p = append(p, validateServers(c)...)
	p = append(p, validateAgent(&c.Agent)...)
	p = append(p, validateChecks(c.Checks)...)
	p = append(p, validateVerify(&c.Verify)...)
	return p.err()
}

// validateOllama returns the problems of one server's values: the
// [ollama] table's (table "ollama") or a [servers.NAME] table's.
func validateOllama(table string, o *Ollama) problems {
	var p problems
	if msg := checkBaseURL(table, o.BaseURL, o.AllowRemote); msg != "" {
		p.add("%s", msg)
	}
	if strings.TrimSpace(o.Model) == "" {
		p.add("%s.model must be a nonempty string", table)
	}
	if o.API != APINative && o.API != APIOpenAI {
		p.add("%s", apiMessage(table))
	}
	if !temperatureRange.contains(o.Temperature) {
		p.add("%s", temperatureRange.message(table+".temperature"))
	}
	if !contextLengthRange.contains(int64(o.ContextLength)) {
		p.add("%s", contextLengthRange.message(table+".context_length"))
	}
	if !modelTimeoutRange.contains(o.Timeout) {
		p.add("%s", modelTimeoutRange.message(table+".timeout"))
	}
	return p
}

// validateAgent returns the problems of the [agent] values; an empty
// choice (a Config built by code) stands for its default.
func validateAgent(a *Agent) problems {
	var p problems
	if !temperatureRange.contains(a.RetryTemperature) {
		p.add("%s", temperatureRange.message("agent.retry_temperature"))
	}
	for _, f := range agentFields {
		if !f.rng.contains(int64(*f.field(a))) {
			p.add("%s", f.rng.message("agent."+f.name))
		}
	}
	if a.Planner != "" && !validPlanner(a.Planner) {
		p.add("%s", plannerMessage)
	}
	if a.EditFormat != "" && !validEditFormat(a.EditFormat) {
		p.add("%s", editFormatMessage)
	}
	if a.ToolDeclarations != "" && !validToolDeclarations(a.ToolDeclarations) {
		p.add("%s", toolDeclarationsMessage)
	}
	return p
}

// validateChecks returns the problems of the checks: their number, names
// and values.
func validateChecks(checks []Check) problems {
	var p problems
	if len(checks) > MaxChecks {
		p.add("%s", tooManyChecks)
	}
	seen := make(map[string]bool, len(checks))
	for i := range checks {
		ch := &checks[i]
		if !validCheckName(ch.Name) {
			p.add("%s", checkNameMessage(ch.Name))
			continue
		}
		if seen[ch.Name] {
			p.add("Duplicate check name: '%s'", ch.Name)
		}
		seen[ch.Name] = true
		p = append(p, validateCheck(ch)...)
	}
	return p
}

// validateCheck returns the value problems of one check with a valid name.
func validateCheck(ch *Check) problems {
	var p problems
	key := "checks." + ch.Name
	if msg := checkArgv(key, ch.Cmd); msg != "" {
		p.add("%s", msg)
	}
	if !checkTimeoutRange.contains(int64(ch.Timeout)) {
		p.add("%s", checkTimeoutRange.message(key+".timeout"))
	}
	if !checkKinds[ch.Kind] {
		p.add("%s.kind is not a supported check kind", key)
	}
	if msg := checkEnv(key, ch.Env); msg != "" {
		p.add("%s", msg)
	}
	return p
}

const tooManyChecks = "At most 32 named checks are supported"

// apiMessage is the problem of a bad api in table ("ollama" or
// "servers.NAME").
func apiMessage(table string) string {
	return table + `.api must be "native" or "openai"`
}

func validCheckName(name string) bool {
	return len(name) <= MaxCheckName && checkNameRE.MatchString(name)
}

func checkNameMessage(name string) string {
	return fmt.Sprintf("Invalid check name: '%s'", show(name))
}

// checkArgv validates a check's argv: 1..MaxArgv nonempty strings without NUL.
func checkArgv(key string, argv []string) string {
	msg := key + ".cmd must be a nonempty string argv array"
	if len(argv) == 0 {
		return msg
	}
	if len(argv) > MaxArgv {
		return fmt.Sprintf("%s of at most %d elements", msg, MaxArgv)
	}
	for _, a := range argv {
		if a == "" || strings.IndexByte(a, 0) >= 0 {
			return msg
		}
	}
	return ""
}

// checkEnv validates an env allowlist; nil means "inherit everything".
func checkEnv(key string, env []string) string {
	if len(env) > MaxEnv {
		return fmt.Sprintf("%s.env must list at most %d variable names", key, MaxEnv)
	}
	for _, name := range env {
		if !envNameRE.MatchString(name) {
			return fmt.Sprintf("%s.env has an invalid variable name: '%s'", key, show(name))
		}
	}
	return ""
}

// checkBaseURL validates a server's origin, the base_url of table
// ("ollama" or "servers.NAME"): http or https, a host, an optional valid
// port, and nothing else (no credentials, query, fragment or path other
// than "/"). The host must be loopback unless allowRemote. The messages of
// [ollama] are the reference program's.
func checkBaseURL(table, raw string, allowRemote bool) string {
	prefix := "Invalid " + table + ".base_url: "
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return prefix + err.Error()
	}
	if msg := apiPathMessage(prefix, raw, u); msg != "" {
		return msg
	}
	if !isOrigin(raw, u) {
		return prefix + "expected HTTP(S) origin without credentials, query or path"
	}
	if msg := portMessage(prefix, u); msg != "" {
		return msg
	}
	if !allowRemote && !isLoopback(u.Hostname()) {
		return prefix + "non-loopback Ollama requires explicit " + table + ".allow_remote=true"
	}
	return ""
}

// webURL: an http or https URL with a host, no user and no query or
// fragment.
func webURL(raw string, u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" && u.User == nil && !strings.ContainsAny(raw, "?#")
}

// apiPathMessage explains a base URL that is an origin with the API's
// path added (…/v1, …/api), the common mistake; "" for any other URL.
func apiPathMessage(baseURLPrefix, raw string, u *url.URL) string {
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if !webURL(raw, u) || (p != "/v1" && p != "/api") {
		return ""
	}
	return baseURLPrefix + fmt.Sprintf("drop the path %q: base_url is the server's origin (for example http://127.0.0.1:11434) and flow adds %s itself (set api = \"openai\" for the OpenAI-compatible API)", p, p)
}

// isOrigin: the URL is a web origin, with no path beyond "/".
func isOrigin(raw string, u *url.URL) bool {
	return webURL(raw, u) && u.Opaque == "" && (u.EscapedPath() == "" || u.EscapedPath() == "/")
}

// portMessage refuses an empty or invalid port; "" when the port is fine
// or absent.
func portMessage(baseURLPrefix string, u *url.URL) string {
	if strings.HasSuffix(u.Host, ":") {
		return baseURLPrefix + "empty port"
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return baseURLPrefix + "invalid port " + strconv.Quote(port)
		}
	}
	return ""
}

// isLoopback reports whether host is an IP literal in 127.0.0.0/8, exactly
// ::1, or the name localhost. Other names are remote, whatever they resolve to.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return false
	}
	if a.Is4() {
		return a.As4()[0] == 127
	}
	return a == netip.IPv6Loopback()
}

// normalizeBaseURL drops the one trailing slash a valid origin may carry.
func normalizeBaseURL(raw string) string { return strings.TrimSuffix(raw, "/") }
