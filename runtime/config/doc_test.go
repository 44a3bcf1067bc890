package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"

	"flow/runtime/config"
)

// configDoc is the user reference of every configuration key.
const configDoc = "../../doc/config.md"

// TestConfigDoc holds doc/config.md to the decoder: every key the decoder
// accepts is listed, every listed key is accepted, and each listed type,
// default, range and choice is what the decoder does. The decoder is asked
// through [config.Load], as flow asks it, never through its key lists, so
// that the test speaks for the file a user writes.
func TestConfigDoc(t *testing.T) {
	data, err := os.ReadFile(configDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkConfigDoc(t, string(data)) {
		t.Error(p)
	}
}

// TestConfigDocCatchesDrift shows that the check of TestConfigDoc fails on
// the kinds of drift it is there for: each edit of the real document must
// be reported.
func TestConfigDocCatchesDrift(t *testing.T) {
	data, err := os.ReadFile(configDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	if p := checkConfigDoc(t, doc); len(p) > 0 {
		t.Fatalf("doc/config.md itself has problems (see TestConfigDoc): %v", p)
	}
	row := func(key string) string {
		for _, line := range strings.Split(doc, "\n") {
			if strings.HasPrefix(line, "| `"+key+"` |") {
				return line
			}
		}
		t.Fatalf("no row for %s in doc/config.md", key)
		return ""
	}
	cycles := row("agent.max_cycles")
	cases := []struct {
		name string
		doc  string
		want string
	}{
		{"a key removed", strings.Replace(doc, cycles+"\n", "", 1),
			"the decoder accepts agent.max_cycles"},
		{"a key the decoder refuses", strings.Replace(doc, cycles, cycles+"\n| `agent.max_rounds` | integer | `2` | 1–5 | rounds |", 1),
			"agent.max_rounds, which the decoder refuses"},
		{"a wrong default", strings.Replace(doc, cycles, strings.Replace(cycles, "`2`", "`3`", 1), 1),
			"agent.max_cycles: the default `3` is not config.Default()'s"},
		{"a wrong range", strings.Replace(doc, cycles, strings.Replace(cycles, "1–5", "1–6", 1), 1),
			"agent.max_cycles: the decoder refuses 6"},
		{"a wrong type", strings.Replace(doc, row("agent.baseline"), strings.Replace(row("agent.baseline"), "boolean", "integer", 1), 1),
			"agent.baseline: the default `true` is not of type integer"},
		{"a choice the decoder refuses", strings.Replace(doc, row("ollama.api"), strings.Replace(row("ollama.api"), "`\"openai\"`", "`\"openai\"`, `\"anthropic\"`", 1), 1),
			`ollama.api: the decoder refuses the choice "anthropic"`},
		{"a key in the wrong section", strings.Replace(doc, row("models.coder"), strings.Replace(row("models.coder"), "models.coder", "agent.coder", 1), 1),
			"agent.coder is listed under [models]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.doc == doc {
				t.Fatal("the edit did not change the document")
			}
			got := checkConfigDoc(t, tc.doc)
			if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("checkConfigDoc(edited doc) = %q, want a problem containing %q", got, tc.want)
			}
		})
	}
}

// docKey is one row of a key table of doc/config.md.
type docKey struct {
	key, typ, def, rng string
	section            string // the table's prefix: "", "ollama.", "checks.NAME.", …
	line               int
}

// The sections of doc/config.md and the key prefix of each.
var docSections = map[string]string{
	"Top level":        "",
	"`[ollama]`":       "ollama.",
	"`[servers.NAME]`": "servers.NAME.",
	"`[models]`":       "models.",
	"`[roles.ROLE]`":   "roles.ROLE.",
	"`[agent]`":        "agent.",
	"`[checks.NAME]`":  "checks.NAME.",
	"`[verify]`":       "verify.",
}

// keyTableHeader is the header row of every key table.
const keyTableHeader = "| Key | Type | Default | Range | Meaning |"

// parseConfigDoc returns the key rows and the example of doc, and the
// problems of its shape.
func parseConfigDoc(doc string) (keys []docKey, example string, problems []string) {
	lines := strings.Split(doc, "\n")
	section, inSection := "", false
	tables := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "## "):
			section, inSection = docSections[strings.TrimPrefix(line, "## ")]
			if !inSection {
				section = "?" + strings.TrimPrefix(line, "## ")
			}
		case line == "```toml" && strings.HasPrefix(section, "?An example") && example == "":
			for i++; i < len(lines) && lines[i] != "```"; i++ {
				example += lines[i] + "\n"
			}
		case line == keyTableHeader:
			if !inSection {
				problems = append(problems, fmt.Sprintf("doc/config.md:%d: a key table under %q, which is no section of the file", i+1, strings.TrimPrefix(section, "?")))
			}
			tables[section] = true
			for i += 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
				k, p := parseKeyRow(lines[i], i+1, section)
				keys = append(keys, k)
				problems = append(problems, p...)
			}
		}
	}
	for name, prefix := range docSections {
		if !tables[prefix] {
			problems = append(problems, fmt.Sprintf("doc/config.md: no key table under ## %s", name))
		}
	}
	if example == "" {
		problems = append(problems, "doc/config.md: no ```toml block under ## An example")
	}
	return keys, example, problems
}

// parseKeyRow reads one row of a key table. A cell holds no "|".
func parseKeyRow(line string, n int, section string) (docKey, []string) {
	cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|"), "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	if len(cells) != 5 {
		return docKey{line: n}, []string{fmt.Sprintf("doc/config.md:%d: a key row needs 5 cells, has %d", n, len(cells))}
	}
	k := docKey{typ: cells[1], def: cells[2], rng: cells[3], section: section, line: n}
	var problems []string
	name, ok := codeSpan(cells[0])
	if !ok {
		return k, []string{fmt.Sprintf("doc/config.md:%d: the key cell %q is not one `key`", n, cells[0])}
	}
	k.key = name
	if rest, ok := strings.CutPrefix(name, section); !ok || strings.Contains(rest, ".") || rest == "" {
		problems = append(problems, fmt.Sprintf("doc/config.md:%d: %s is listed under [%s]", n, name, strings.TrimSuffix(section, ".")))
	}
	if !slices.Contains([]string{"string", "integer", "number", "boolean", "string array"}, k.typ) {
		problems = append(problems, fmt.Sprintf("doc/config.md:%d: %s has the type %q; the types are string, integer, number, boolean, string array", n, name, k.typ))
	}
	if _, ok := codeSpan(k.def); !ok && k.def != "—" {
		problems = append(problems, fmt.Sprintf("doc/config.md:%d: %s's default %q is neither one `value` nor —", n, name, k.def))
	}
	return k, problems
}

// codeSpan returns the text of s when s is exactly one `code span`.
func codeSpan(s string) (string, bool) {
	if len(s) < 3 || s[0] != '`' || s[len(s)-1] != '`' || strings.Contains(s[1:len(s)-1], "`") {
		return "", false
	}
	return s[1 : len(s)-1], true
}

// notFromFile are the fields of [config.Config] that no file key sets.
var notFromFile = map[string]string{
	"workspace":         "the resolved workspace (workspace_dir or --workspace)",
	"config_path":       "the path of the loaded file",
	"trusted":           "--trusted only",
	"warnings":          "computed by Load",
	"checks.NAME.name":  "the table's name",
	"servers.NAME.name": "the table's name",
	"roles.ROLE.name":   "the table's name",
}

// checkConfigDoc returns every disagreement between doc and the decoder.
func checkConfigDoc(t *testing.T, doc string) []string {
	t.Helper()
	keys, example, problems := parseConfigDoc(doc)
	d := newDecoderProbe(t)
	listed := map[string]bool{}
	for _, k := range keys {
		if k.key == "" {
			continue
		}
		if listed[k.key] {
			problems = append(problems, fmt.Sprintf("doc/config.md:%d: %s is listed twice", k.line, k.key))
		}
		listed[k.key] = true
		if !d.accepts(k.key) {
			problems = append(problems, fmt.Sprintf("doc/config.md:%d: it lists %s, which the decoder refuses as an unknown key", k.line, k.key))
			continue
		}
		problems = append(problems, d.checkRow(k)...)
	}
	for key, field := range configFields() {
		switch {
		case listed[key]:
		case d.accepts(key):
			problems = append(problems, fmt.Sprintf("doc/config.md: the decoder accepts %s (%s), which no key table lists", key, field))
		case notFromFile[key] == "":
			problems = append(problems, fmt.Sprintf("%s (%s) is no key of the file and not known to TestConfigDoc as set elsewhere: add it to notFromFile", key, field))
		}
	}
	if example != "" {
		problems = append(problems, d.checkExample(example)...)
	}
	return problems
}

// configFields returns the key each field of [config.Config] would have
// in the file, from its json tag (the tags are the file's key names), with
// the field's name.
func configFields() map[string]string {
	out := map[string]string{}
	root := reflect.TypeFor[config.Config]()
	for i := range root.NumField() {
		f := root.Field(i)
		tag := jsonName(f)
		switch f.Type.Kind() {
		case reflect.Struct:
			addFields(out, tag+".", f.Type)
		case reflect.Slice:
			if f.Type.Elem().Kind() == reflect.Struct {
				addFields(out, tag+tableOf(tag), f.Type.Elem())
				continue
			}
			out[tag] = "Config." + f.Name
		default:
			out[tag] = "Config." + f.Name
		}
	}
	return out
}

// tableOf is the placeholder of a table of tables' names in the document:
// [roles.ROLE] is a role's, the others are named.
func tableOf(tag string) string {
	if tag == "roles" {
		return ".ROLE."
	}
	return ".NAME."
}

func addFields(out map[string]string, prefix string, typ reflect.Type) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			addFields(out, prefix, f.Type) // an embedded table's keys are the table's own
			continue
		}
		out[prefix+jsonName(f)] = typ.Name() + "." + f.Name
	}
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// decoderProbe loads small configuration files, each once.
type decoderProbe struct {
	t     *testing.T
	dir   string
	seen  map[string]loaded
	files int
}

type loaded struct {
	cfg *config.Config
	err error
}

func newDecoderProbe(t *testing.T) *decoderProbe {
	return &decoderProbe{t: t, dir: t.TempDir(), seen: map[string]loaded{}}
}

// load returns what [config.Load] makes of text as the --config file.
func (d *decoderProbe) load(text string) (*config.Config, error) {
	if l, ok := d.seen[text]; ok {
		return l.cfg, l.err
	}
	d.files++
	path := filepath.Join(d.dir, fmt.Sprintf("flow-%d.toml", d.files))
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		d.t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{ConfigFile: path, Cwd: d.dir, Getenv: func(string) string { return "" }})
	d.seen[text] = loaded{cfg, err}
	return cfg, err
}

// probeCheck is the check name the probes use for checks.NAME, and the
// server name for servers.NAME; probeRole is the role of roles.ROLE.
const (
	probeCheck = "probe"
	probeRole  = "reviewer"
)

// probeServer is the [servers.probe] table's required keys.
var probeServer = map[string]string{"base_url": `"http://127.0.0.1:8000"`, "model": `"m"`}

// serverDocument is a [servers.probe] table with its required keys, leaf
// set to lit.
func serverDocument(leaf, lit string) string {
	text := "[servers." + probeCheck + "]\n"
	for _, k := range []string{"base_url", "model"} {
		if k != leaf {
			text += k + " = " + probeServer[k] + "\n"
		}
	}
	if leaf == "" {
		return text
	}
	return text + leaf + " = " + lit + "\n"
}

// document returns a file that sets key to the TOML value lit, and the
// key as the decoder's messages name it.
func document(key, lit string) (text, named string) {
	table, leaf, ok := cutLast(key)
	switch {
	case !ok:
		return key + " = " + lit + "\n", key
	case strings.HasPrefix(table, "checks.NAME"):
		text = "[checks." + probeCheck + "]\n"
		if leaf != "cmd" {
			text += "cmd = [\"true\"]\n"
		}
		return text + leaf + " = " + lit + "\n", "checks." + probeCheck + "." + leaf
	case table == "servers.NAME":
		return serverDocument(leaf, lit), "servers." + probeCheck + "." + leaf
	case table == "roles.ROLE":
		return "[roles." + probeRole + "]\n" + leaf + " = " + lit + "\n", "roles." + probeRole + "." + leaf
	default:
		return "[" + table + "]\n" + leaf + " = " + lit + "\n", key
	}
}

func cutLast(key string) (before, after string, ok bool) {
	i := strings.LastIndexByte(key, '.')
	if i < 0 {
		return "", key, false
	}
	return key[:i], key[i+1:], true
}

// accepts reports whether the decoder knows key: setting it to any value
// draws no "Unknown … options" problem.
func (d *decoderProbe) accepts(key string) bool {
	text, _ := document(key, "1")
	_, err := d.load(text)
	_, leaf, _ := cutLast(key)
	for _, p := range problemsOf(err) {
		if strings.HasPrefix(p, "Unknown ") && strings.Contains(p, leaf) {
			return false
		}
	}
	return true
}

// refuses reports whether setting key to lit is a configuration error
// naming the key.
func (d *decoderProbe) refuses(key, lit string) bool {
	text, named := document(key, lit)
	_, err := d.load(text)
	return slices.ContainsFunc(problemsOf(err), func(p string) bool { return strings.Contains(p, named) })
}

func problemsOf(err error) []string {
	var ce *config.Error
	if errors.As(err, &ce) {
		return ce.Problems
	}
	if err != nil {
		return []string{err.Error()}
	}
	return nil
}

// checkRow compares one listed key's type, default and range with the
// decoder.
func (d *decoderProbe) checkRow(k docKey) []string {
	var problems []string
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf("doc/config.md:%d: %s: ", k.line, k.key)+fmt.Sprintf(format, args...))
	}
	if wrong := wrongTypeValue(k.typ); wrong != "" && !d.refuses(k.key, wrong) {
		bad("the decoder takes %s, which is not a %s", wrong, k.typ)
	}
	if lit, ok := codeSpan(k.def); ok {
		if why := d.checkDefault(k, lit); why != "" {
			bad("%s", why)
		}
	}
	switch k.typ {
	case "integer", "number":
		for _, why := range d.checkRange(k) {
			bad("%s", why)
		}
	case "string":
		for _, why := range d.checkChoices(k) {
			bad("%s", why)
		}
	}
	return problems
}

// wrongTypeValue is a TOML value that is not of type typ.
func wrongTypeValue(typ string) string {
	switch typ {
	case "string":
		return "1"
	case "integer", "number", "boolean", "string array":
		return `"x"`
	}
	return ""
}

// checkDefault says what is wrong with lit as key's default: it must be a
// TOML value of the listed type, and a file setting the key to it must
// load to what a file without the key loads to, which for the tables
// other than [checks] is config.Default().
func (d *decoderProbe) checkDefault(k docKey, lit string) string {
	var v map[string]any
	if _, err := toml.Decode("v = "+lit, &v); err != nil {
		return fmt.Sprintf("the default `%s` is not a TOML value: %v", lit, err)
	}
	if !ofType(v["v"], k.typ) {
		return fmt.Sprintf("the default `%s` is not of type %s", lit, k.typ)
	}
	text, _ := document(k.key, lit)
	cfg, err := d.load(text)
	if err != nil {
		return fmt.Sprintf("the decoder refuses its default `%s`: %v", lit, err)
	}
	if strings.HasPrefix(k.key, "servers.") {
		base, err := d.load(serverDocument("", ""))
		if err != nil {
			return fmt.Sprintf("a server with only base_url and model does not load: %v", err)
		}
		if diff := cmp.Diff(base.Servers, cfg.Servers); diff != "" {
			return fmt.Sprintf("the default `%s` is not the decoder's (-without the key +with it):\n%s", lit, diff)
		}
		return ""
	}
	if strings.HasPrefix(k.key, "checks.") {
		base, err := d.load("[checks." + probeCheck + "]\ncmd = [\"true\"]\n")
		if err != nil {
			return fmt.Sprintf("a check with only cmd does not load: %v", err)
		}
		if diff := cmp.Diff(base.Checks, cfg.Checks); diff != "" {
			return fmt.Sprintf("the default `%s` is not the decoder's (-without the key +with it):\n%s", lit, diff)
		}
		return ""
	}
	if diff := cmp.Diff(defaults(config.Default()), defaults(*cfg)); diff != "" {
		return fmt.Sprintf("the default `%s` is not config.Default()'s (-Default() +with the key):\n%s", lit, diff)
	}
	return ""
}

// defaults returns the parts of c a file's tables other than [checks] set,
// an empty glob list read as none.
func defaults(c config.Config) []any {
	v := c.Verify
	if len(v.Tests) == 0 {
		v.Tests = nil
	}
	if len(v.Protect) == 0 {
		v.Protect = nil
	}
	return []any{c.Ollama, c.Servers, c.Models, c.Roles, c.Agent, v}
}

func ofType(v any, typ string) bool {
	switch x := v.(type) {
	case string:
		return typ == "string"
	case int64:
		return typ == "integer" || typ == "number"
	case float64:
		return typ == "number"
	case bool:
		return typ == "boolean"
	case []any:
		return typ == "string array" && !slices.ContainsFunc(x, func(e any) bool { _, ok := e.(string); return !ok })
	}
	return false
}

// numberRange is the A–B a numeric key's Range cell starts with.
var numberRange = regexp.MustCompile(`^(-?[0-9]+(?:\.[0-9]+)?)–(-?[0-9]+(?:\.[0-9]+)?)(?:\s|$)`)

// checkRange checks the listed range of a numeric key: both ends are
// accepted, what lies just outside them is refused, and a fraction is
// refused for an integer and accepted for a number.
func (d *decoderProbe) checkRange(k docKey) []string {
	m := numberRange.FindStringSubmatch(k.rng)
	if m == nil {
		return []string{fmt.Sprintf("the range %q does not start with A–B", k.rng)}
	}
	lo, _ := strconv.ParseFloat(m[1], 64)
	hi, _ := strconv.ParseFloat(m[2], 64)
	step := 1.0
	if k.typ == "number" {
		step = 0.01
	}
	var problems []string
	for _, v := range []float64{lo, hi} {
		if d.refuses(k.key, num(v)) {
			problems = append(problems, fmt.Sprintf("the decoder refuses %s, listed as allowed (%s)", num(v), k.rng))
		}
	}
	for _, v := range []float64{lo - step, hi + step} {
		if !d.refuses(k.key, num(v)) {
			problems = append(problems, fmt.Sprintf("the decoder takes %s, outside the listed range %s", num(v), k.rng))
		}
	}
	if frac := lo + 0.5; frac < hi {
		lit := strconv.FormatFloat(frac, 'f', -1, 64)
		switch refused := d.refuses(k.key, lit); {
		case k.typ == "integer" && !refused:
			problems = append(problems, fmt.Sprintf("the decoder takes %s: the key is a number, not an integer", lit))
		case k.typ == "number" && refused:
			problems = append(problems, fmt.Sprintf("the decoder refuses %s: the key is an integer, not a number", lit))
		}
	}
	return problems
}

// num writes v as TOML: an integer when it is whole.
func num(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// checkChoices checks a string key whose Range cell lists its choices
// (`"a"`, `"b"`): each is accepted, and a value not listed is refused.
func (d *decoderProbe) checkChoices(k docKey) []string {
	var choices []string
	for _, c := range strings.Split(k.rng, ", ") {
		lit, ok := codeSpan(c)
		if !ok || !strings.HasPrefix(lit, `"`) {
			return nil // prose: not a list of choices
		}
		choices = append(choices, lit)
	}
	var problems []string
	for _, c := range choices {
		if d.refuses(k.key, c) {
			problems = append(problems, fmt.Sprintf("the decoder refuses the choice %s", c))
		}
	}
	if !d.refuses(k.key, `"no-such-choice"`) {
		problems = append(problems, fmt.Sprintf("the decoder takes a value the choices %s do not list", k.rng))
	}
	return problems
}

// checkExample loads the document's example, which sets every key of the
// tables other than [checks] to its default.
func (d *decoderProbe) checkExample(example string) []string {
	cfg, err := d.load(example)
	if err != nil {
		return []string{fmt.Sprintf("doc/config.md: the example does not load: %v", err)}
	}
	if diff := cmp.Diff(defaults(config.Default()), defaults(*cfg)); diff != "" {
		return []string{fmt.Sprintf("doc/config.md: the example's values are not config.Default()'s (-Default() +example):\n%s", diff)}
	}
	if len(cfg.Checks) == 0 {
		return []string{"doc/config.md: the example has no check"}
	}
	return nil
}
