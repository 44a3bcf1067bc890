package server

import "testing"

func TestAcceptanceHost(t *testing.T) {
	if got := Default().Host; got != "localhost" {
		t.Errorf("Default().Host = %q, want localhost", got)
	}
	if got := Addr(Default()); got != "localhost:8080" {
		t.Errorf("Addr(Default()) = %q, want localhost:8080", got)
	}
	if got := Addr(Config{Host: "example.org", Port: 1}); got != "example.org:1" {
		t.Errorf("Addr = %q, want example.org:1", got)
	}
}
