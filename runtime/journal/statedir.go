package journal

import (
	"errors"
	"fmt"
	"os/user"
	"path/filepath"
)

// StateDir returns flow's state directory: $XDG_STATE_HOME/flow, or
// $HOME/.local/state/flow when XDG_STATE_HOME is unset, empty or relative
// (the XDG base directory specification says relative values are invalid and
// must be ignored). When HOME is unset or relative too, the home directory of
// the current user from the system's user database is used. getenv is
// usually os.Getenv; the directory is not created.
func StateDir(getenv func(string) string) (string, error) {
	if x := getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "flow"), nil
	}
	home := getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		u, err := user.Current()
		if err != nil {
			return "", fmt.Errorf("state directory: HOME is not set and the current user is unknown: %w", err)
		}
		home = u.HomeDir
	}
	if home == "" || !filepath.IsAbs(home) {
		return "", errors.New("state directory: no absolute HOME or XDG_STATE_HOME; set XDG_STATE_HOME")
	}
	return filepath.Join(home, ".local", "state", "flow"), nil
}
