package verify

import (
	"fmt"
	"path/filepath"
	"sort"

	"flow/runtime/config"
	"flow/runtime/lang"
)

// maxLanguageWarnings bounds the uncovered languages named in warnings.
const maxLanguageWarnings = 3

// Onboarding returns the warnings a new user needs before a run can ever be
// verified: no configuration file loaded, no (required) check configured, a
// language present in the workspace that no lint-kind check covers, and a
// workspace that is the file system's root or the home directory. files are
// workspace paths (a bounded listing is enough); home is the user's home
// directory and userFile the user configuration file ([config.UserFile]),
// "" when unknown. Each warning is one sentence saying what to do.
func Onboarding(cfg *config.Config, files []string, home, userFile string) []string {
	var out []string
	ws := filepath.Clean(cfg.Workspace)
	switch {
	case ws == "/":
		out = append(out, "The workspace is the root directory /: pass --workspace with a project directory")
	case home != "" && ws == filepath.Clean(home):
		out = append(out, fmt.Sprintf("The workspace is your home directory %s: pass --workspace with a project directory", ws))
	}
	if cfg.ConfigPath == "" {
		create := "create the user file $XDG_CONFIG_HOME/flow/config.toml"
		if userFile != "" {
			create = "create " + userFile
		}
		out = append(out, "No configuration file was loaded, so flow runs on its defaults with no checks: "+create+" or pass --config FILE")
	}
	var required []config.Check
	for _, c := range cfg.Checks {
		if c.Required {
			required = append(required, c)
		}
	}
	switch {
	case len(cfg.Checks) == 0:
		out = append(out, "No checks are configured, so runs cannot be verified: add [checks.NAME] tables with the project's test and lint commands")
		return out
	case len(required) == 0:
		out = append(out, "No check is required, so runs cannot be verified: set required = true on the project's test and lint checks")
		return out
	}
	for i, lang := range uncovered(files, required) {
		if i == maxLanguageWarnings {
			break
		}
		out = append(out, fmt.Sprintf("No lint check covers the %s files in this workspace, so edits to them cannot be verified: add a required check with kind = \"lint\" and filetypes = [%q]", lang, lang))
	}
	return out
}

// uncovered returns the languages of files that no required static check
// covers, most files first.
func uncovered(files []string, required []config.Check) []string {
	count := map[string]int{}
	ext := map[string]string{}
	for _, f := range files {
		if lang.IsDocumentation(f) {
			continue
		}
		// Only programming and build languages need a lint check; an
		// unknown extension (".png") stands for itself and needs none.
		language := lang.Of(f)
		if !lang.Known(language) {
			continue
		}
		count[language]++
		ext[language] = lang.Extension(f)
	}
	var out []string
	for language := range count {
		covered := false
		for _, c := range required {
			if staticKinds[c.Kind] && filetypeMatches(c.Filetypes, language, ext[language]) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, language)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if count[out[i]] != count[out[j]] {
			return count[out[i]] > count[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}
