// Package plugin is the Go side of flow's Neovim integration (doc/design.md §11):
//
//   - [Bridge], the editor bridge client: it calls the editor tool module
//     (flow.tools, or Rose's rose.tools) in a Neovim instance through the
//     two fixed Lua strings of doc/design.md §11.3, bounds every request by the
//     editor timeout and fails closed;
//   - [DialSocket], which connects to a private Neovim socket (`flow serve
//     --nvim SOCKET`);
//   - [ServeHost], the `flow nvim` RPC host that lua/flow/rpc.lua starts
//     with jobstart(..., {rpc = true}): the handlers of the methods in
//     methods.go. Runs, checks and undos are jobs of the runtime's one job
//     system (runtime/job): the host starts them, answers "busy" when the
//     runtime refuses, and pushes their progress and result back to Lua
//     under the token Lua named the job with. It keeps no job table and no
//     writer slot of its own; :FlowStop is the runtime's cancel-all. A
//     review (flow_review, :FlowReview) is answered when it is done: its
//     reverts are buffer edits made through the editor bridge meanwhile.
//
// The defaults of the editor attachment (the tool module of each command,
// the editor timeout) are decided in defaults.go and nowhere else.
//
// Neovim's auto-sourced plugin/flow.lua lives in this directory too; Neovim
// only sources .lua and .vim files, so the Go files are never loaded by it.
// Inside this package go-client's plugin package would be imported as
// nvimplugin; the host does not need it (it serves with RegisterHandler).
package plugin
