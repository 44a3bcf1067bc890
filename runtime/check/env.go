package check

import "os"

// envFor returns the environment of a check with allowlist allow: nil (the
// whole of flow's environment, as os/exec does for a nil Cmd.Env) when allow
// is nil, else "NAME=value" for each allowed variable that is set in flow's
// environment, in allowlist order. A non-nil empty allowlist gives an empty
// environment.
func envFor(allow []string) []string {
	if allow == nil {
		return nil
	}
	env := make([]string, 0, len(allow))
	seen := make(map[string]bool, len(allow))
	for _, name := range allow {
		if seen[name] {
			continue
		}
		seen[name] = true
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}
