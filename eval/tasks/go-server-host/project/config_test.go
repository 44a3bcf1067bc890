package server

import "testing"

func TestDefaultPort(t *testing.T) {
	if got := Default().Port; got != 8080 {
		t.Errorf("Default().Port = %d, want 8080", got)
	}
}
