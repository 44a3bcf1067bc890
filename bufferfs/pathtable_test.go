package bufferfs_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/bufferfs"
)

// pathTable is testdata/paths.json, the path cases that the editor tool
// module (lua/flow/tools) must judge as Go does; its "doc" field describes
// the format. plugin's TestPathTableLua runs the same file through Lua.
type pathTable struct {
	Rules map[string]string `json:"rules"`
	Root  string            `json:"root"`
	Cases []pathCase        `json:"cases"`
}

type pathCase struct {
	Name    string     `json:"name"`
	Path    pathPieces `json:"path"`
	Clean   pathPieces `json:"clean"`
	Same    bool       `json:"same"`
	Refused string     `json:"refused"`
	Bytes   int        `json:"bytes"`
}

// pathPieces is a path written as one string or as a list of pieces.
type pathPieces struct {
	set bool
	s   string
}

func (p *pathPieces) UnmarshalJSON(data []byte) error {
	var whole string
	if json.Unmarshal(data, &whole) == nil {
		*p = pathPieces{set: true, s: whole}
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("path: want a string or a list of pieces: %w", err)
	}
	var b strings.Builder
	for _, raw := range list {
		var piece struct {
			Text  *string `json:"text"`
			Hex   *string `json:"hex"`
			Times *int    `json:"times"`
		}
		if json.Unmarshal(raw, &whole) == nil {
			b.WriteString(whole)
			continue
		}
		if err := json.Unmarshal(raw, &piece); err != nil {
			return fmt.Errorf("path piece %s: %w", raw, err)
		}
		var s string
		switch {
		case piece.Text != nil && piece.Hex == nil:
			s = *piece.Text
		case piece.Hex != nil && piece.Text == nil:
			bs, err := hex.DecodeString(*piece.Hex)
			if err != nil {
				return fmt.Errorf("path piece %s: %w", raw, err)
			}
			s = string(bs)
		default:
			return fmt.Errorf("path piece %s: want text or hex", raw)
		}
		times := 1
		if piece.Times != nil {
			times = *piece.Times
		}
		b.WriteString(strings.Repeat(s, times))
	}
	*p = pathPieces{set: true, s: b.String()}
	return nil
}

// loadPathTable reads and checks the table: every case has exactly one
// outcome, names a known rule, and has the length it declares.
func loadPathTable(t *testing.T) pathTable {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "paths.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tab pathTable
	if err := json.Unmarshal(data, &tab); err != nil {
		t.Fatalf("testdata/paths.json: %v", err)
	}
	used := map[string]bool{}
	for _, c := range tab.Cases {
		outcomes := 0
		for _, set := range []bool{c.Clean.set, c.Same, c.Refused != ""} {
			if set {
				outcomes++
			}
		}
		if outcomes != 1 || !c.Path.set {
			t.Fatalf("case %q: want a path and exactly one of clean, same and refused", c.Name)
		}
		if c.Refused != "" && tab.Rules[c.Refused] == "" {
			t.Fatalf("case %q: unknown rule %q", c.Name, c.Refused)
		}
		if c.Bytes != 0 && len(c.Path.s) != c.Bytes {
			t.Fatalf("case %q: path is %d bytes, the table says %d", c.Name, len(c.Path.s), c.Bytes)
		}
		used[c.Refused] = true
	}
	for name := range tab.Rules {
		if !used[name] {
			t.Errorf("no case is refused by rule %q", name)
		}
	}
	return tab
}

// want returns the cleaned path a case expects, or "" when it is refused.
func (c pathCase) want() string {
	switch {
	case c.Same:
		return c.Path.s
	case c.Clean.set:
		return c.Clean.s
	}
	return ""
}

// ruleIn returns the names of the rules whose text msg contains.
func (tab pathTable) ruleIn(msg string) []string {
	var names []string
	for name, text := range tab.Rules {
		if strings.Contains(msg, text) {
			names = append(names, name)
		}
	}
	return names
}

// checkRefusal reports whether err is the refusal rule of tab, and no
// other rule.
func (tab pathTable) checkRefusal(err error, rule string) error {
	if err == nil {
		return fmt.Errorf("accepted, want refused by %s (%q)", rule, tab.Rules[rule])
	}
	if !errors.Is(err, bufferfs.ErrInvalidPath) {
		return fmt.Errorf("%v, want an ErrInvalidPath error", err)
	}
	if got := tab.ruleIn(err.Error()); len(got) != 1 || got[0] != rule {
		return fmt.Errorf("%q, want the message of rule %s only (%q)", err, rule, tab.Rules[rule])
	}
	return nil
}

// TestPathTable runs every case of testdata/paths.json through ValidPath
// and through the Disk's Read, List and Write, which vet a path the same
// way before any I/O: a refused path gets the rule's message from each of
// them; an accepted one gets no rule's message, except that Read and Write
// refuse the root, which List accepts. The cleaned path is compared
// exactly.
func TestPathTable(t *testing.T) {
	tab := loadPathTable(t)
	root := t.TempDir()
	disk := newDisk(t, root, bufferfs.DiskOptions{}, false)
	ctx := t.Context()
	for _, c := range tab.Cases {
		t.Run(c.Name, func(t *testing.T) {
			p := c.Path.s
			got, err := bufferfs.ValidPath(p)
			want := c.want()
			if c.Refused != "" {
				if err := tab.checkRefusal(err, c.Refused); err != nil {
					t.Errorf("ValidPath(%.80q): %v", p, err)
				}
			} else if err != nil || got != want {
				t.Errorf("ValidPath(%.80q) = %.80q, %v; want %.80q", p, got, err, want)
			}
			_, rerr := disk.Read(ctx, p, 0)
			_, lerr := disk.List(ctx, p)
			_, werr := disk.Write(ctx, p, []byte("x"), bufferfs.WriteOptions{})
			for _, op := range []struct {
				name      string
				err       error
				wantsFile bool
			}{{"Read", rerr, true}, {"List", lerr, false}, {"Write", werr, true}} {
				switch {
				case c.Refused != "":
					if err := tab.checkRefusal(op.err, c.Refused); err != nil {
						t.Errorf("%s(%.80q): %v", op.name, p, err)
					}
				case op.wantsFile && want == ".":
					if op.err == nil || !strings.Contains(op.err.Error(), tab.Root) {
						t.Errorf("%s(%.80q) = %v, want the root refusal %q", op.name, p, op.err, tab.Root)
					}
				case op.err != nil && len(tab.ruleIn(op.err.Error())) > 0:
					t.Errorf("%s(%.80q) = %v, want no lexical refusal", op.name, p, op.err)
				}
			}
		})
	}
	entries, err := os.ReadDir(root)
	if err != nil || len(entries) != 0 {
		t.Errorf("the read-only workspace holds %d entries (%v), want none", len(entries), err)
	}
}
