package mcp

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// Protocol versions flow speaks (SPEC §11). All use the initialize handshake.
const (
	versionPreferred = "2025-11-25"
	version20250618  = "2025-06-18"
	version20250326  = "2025-03-26"
)

var (
	errAlreadyInitialized = &rpcError{code: codeInvalidRequest, message: "Already initialized"}
	errProtocolVersion    = &rpcError{code: codeInvalidParams, message: "protocolVersion must be a nonempty string"}
	errClientInfo         = &rpcError{code: codeInvalidParams, message: "Initialize requires capabilities and clientInfo"}
)

// negotiate returns the version to answer a client asking for requested: the
// same one when flow speaks it, else the preferred one.
func negotiate(requested string) string {
	switch requested {
	case versionPreferred, version20250618, version20250326:
		return requested
	}
	return versionPreferred
}

// initialize answers the initialize request: once per session, with
// capabilities and clientInfo{name, version} required (reference §11.3).
// mcp-go builds the result from a normalised request carrying the
// negotiated version and no _meta, so it never enters its stateless
// 2026-07-28 mode and never echoes a version flow does not speak.
func (ss *session) initialize(m message) {
	if ss.initOK {
		_ = ss.out.error(m.id, errAlreadyInitialized)
		return
	}
	var p map[string]json.RawMessage
	if m.params != nil {
		_ = json.Unmarshal(m.params, &p)
	}
	requested, ok := jsonString(p["protocolVersion"])
	if !ok || requested == "" {
		_ = ss.out.error(m.id, errProtocolVersion)
		return
	}
	info, ok := clientInfo(p["clientInfo"])
	if !ok || !isObject(p["capabilities"]) {
		_ = ss.out.error(m.id, errClientInfo)
		return
	}
	// Capabilities mcp-go cannot decode (an unexpected shape inside an
	// object) are replaced by none: flow uses no client capability.
	caps := p["capabilities"]
	if json.Unmarshal(caps, new(mcp.ClientCapabilities)) != nil {
		caps = json.RawMessage(`{}`)
	}
	params := map[string]any{
		"protocolVersion": negotiate(requested),
		"capabilities":    caps,
		"clientInfo":      info,
	}
	resp := ss.invoke("initialize", params)
	if _, ok := resp.(mcp.JSONRPCResponse); ok {
		ss.initOK = true
		ss.log.Debug("initialized", "client", info.Name, "client_version", info.Version, "requested", requested)
	}
	ss.reply(m.id, resp)
}

// clientInfo decodes {"name": string, "version": string}; other members are
// ignored.
func clientInfo(raw json.RawMessage) (mcp.Implementation, bool) {
	if !isObject(raw) {
		return mcp.Implementation{}, false
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(raw, &p) != nil {
		return mcp.Implementation{}, false
	}
	name, ok1 := jsonString(p["name"])
	version, ok2 := jsonString(p["version"])
	if !ok1 || !ok2 {
		return mcp.Implementation{}, false
	}
	return mcp.Implementation{Name: name, Version: version}, true
}
