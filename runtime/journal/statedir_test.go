package journal

import (
	"os/user"
	"path/filepath"
	"testing"
)

func TestStateDir(t *testing.T) {
	u, err := user.Current()
	if err != nil {
		t.Skip("no current user:", err)
	}
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"xdg", map[string]string{"XDG_STATE_HOME": "/x/state", "HOME": "/home/u"}, "/x/state/flow"},
		{"empty xdg", map[string]string{"XDG_STATE_HOME": "", "HOME": "/home/u"}, "/home/u/.local/state/flow"},
		{"relative xdg", map[string]string{"XDG_STATE_HOME": "rel/state", "HOME": "/home/u"}, "/home/u/.local/state/flow"},
		{"no home", map[string]string{}, filepath.Join(u.HomeDir, ".local/state/flow")},
		{"relative home", map[string]string{"HOME": "home"}, filepath.Join(u.HomeDir, ".local/state/flow")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := StateDir(func(k string) string { return tc.env[k] })
			if err != nil || got != tc.want {
				t.Errorf("StateDir(%v) = %q, %v; want %q", tc.env, got, err, tc.want)
			}
		})
	}
}
