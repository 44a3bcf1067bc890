package main

import "runtime/debug"

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

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
