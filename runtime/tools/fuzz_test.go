package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzToolArgs feeds argument text to every built-in tool's parser. Text
// that parses must give an argument struct that encodes back to arguments
// which parse to the same struct; text that does not must give a message
// naming the tool's arguments. Nothing may panic. Besides the seeds here,
// testdata/fuzz/FuzzToolArgs holds the awkward ones (deep nesting, node
// limits, non-finite and huge numbers, escapes).
func FuzzToolArgs(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `[]`, `"x"`,
		`{"path":"a.go"}`,
		`{"path":"a.go","start_line":1,"end_line":2}`,
		`{"path":"a.go","start_line":1.0}`,
		`{"path":"a.go","start_line":-99999999999999999999}`,
		`{"path":"a","old_string":"x","new_string":"y","replace_all":true}`,
		`{"pattern":"func","glob":"*.go","literal":false,"path":""}`,
		`{"name":"vet"}`,
		`{"path":"a","content":"x","mode":"0600"}`,
	} {
		f.Add(seed)
	}
	tools := builtins()
	f.Fuzz(func(t *testing.T, text string) {
		for _, tl := range tools {
			v, msg := tl.parse(text)
			if msg != "" {
				if v != nil || !strings.Contains(msg, usage(tl)) {
					t.Fatalf("%s: parse(%q) = %v, %q; want nil and a message with the usage", tl.name, text, v, msg)
				}
				continue
			}
			if reflect.TypeOf(v) != tl.args {
				t.Fatalf("%s: parse(%q) = %T, want %s", tl.name, text, v, tl.args)
			}
			again, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%s: encode %+v: %v", tl.name, v, err)
			}
			w, msg := tl.parse(string(again))
			if msg != "" {
				t.Fatalf("%s: %q parsed to %+v, whose encoding %s does not parse: %s", tl.name, text, v, again, msg)
			}
			if !reflect.DeepEqual(v, w) {
				t.Fatalf("%s: %q parsed to %+v, its encoding %s to %+v", tl.name, text, v, again, w)
			}
		}
	})
}
