package main

import "runtime/debug"

// version and commit are set at build time with -ldflags
// "-X main.version=... -X main.commit=..." (make build, :FlowInstall). The
// commit is what the Neovim plugin compares with its checkout's HEAD to
// tell a stale bin/flow (lua/flow/install.lua).
var (
	version = ""
	commit  = ""
)

// baseVersion is the version of this source tree.
const baseVersion = "0.1.0"

func flowVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return baseVersion + "-dev"
}

// versionLine is what `flow version` prints: "flow VERSION", then
// " (commit HASH)" when the build stamped one.
func versionLine() string {
	if commit == "" {
		return "flow " + flowVersion()
	}
	return "flow " + flowVersion() + " (commit " + commit + ")"
}
