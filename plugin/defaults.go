package plugin

import "time"

// The defaults of the editor attachment, decided here and nowhere else: the
// commands pass what the user gave ("" when nothing) and the plugin picks.
const (
	// DefaultModule is the editor tool module of `flow nvim`: the one the
	// Lua plugin ships.
	DefaultModule = "flow.tools"
	// DefaultSocketModule is the editor tool module of `flow serve --nvim
	// SOCKET`: what Rose's Neovim provides.
	DefaultSocketModule = "rose.tools"
	// DefaultTimeout bounds one editor request.
	DefaultTimeout = 120 * time.Second
)

// moduleOr returns module, or def when module is "".
func moduleOr(module, def string) string {
	if module == "" {
		return def
	}
	return module
}
