package textutil

import (
	"os"
	"strings"
	"testing"
)

func TestAcceptanceReverse(t *testing.T) {
	cases := map[string]string{
		"":      "",
		"a":     "a",
		"ab":    "ba",
		"héllo": "olléh",
		"日本語":   "語本日",
	}
	for in, want := range cases {
		if got := Reverse(in); got != want {
			t.Errorf("Reverse(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAcceptanceReverseHasATest(t *testing.T) {
	b, err := os.ReadFile("textutil_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Reverse(") {
		t.Error("textutil_test.go has no test that calls Reverse")
	}
}
