package mcp

import "encoding/json"

// Protocol versions flow speaks (doc/design.md §10). All use the initialize handshake.
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
// capabilities and clientInfo{name, version} required (doc/design.md §10.3).
// The answer carries the negotiated version, so flow never echoes a
// version it does not speak.
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
	// The client capabilities flow uses are tasks (it then sends
	// notifications/tasks/status) and form-mode elicitation (a flow_run
	// that leaves an unverified change asks what to do with it);
	// capabilities need only be an object.
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(p["capabilities"], &caps)
	version := negotiate(requested)
	ss.tasks = ss.srv.tasks != nil && versionHasTasks(version)
	ss.clientTasks = ss.tasks && isObject(caps["tasks"])
	ss.elicit = version != version20250326 && formElicitation(caps["elicitation"])
	ss.wait = ss.srv.defaultWait(info.Name)
	ss.initOK = true
	ss.log.Debug("initialized", "client", info.Name, "client_version", info.Version, "requested", requested)
	ss.result(m.id, initializeResult{
		ProtocolVersion: version,
		Capabilities:    capabilities(ss.tasks),
		ServerInfo:      implementation{Name: "flow", Version: ss.srv.version},
		Instructions:    Instructions(),
	})
}

// initializeResult is the result of initialize: tools without list
// changes, flow's name and version, and its instructions for the model.
type initializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    serverCapabilities `json:"capabilities"`
	ServerInfo      implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions"`
}

type serverCapabilities struct {
	Tools struct{}         `json:"tools"`
	Tasks *tasksCapability `json:"tasks,omitempty"`
}

// tasksCapability is MCP's tasks capability as flow declares it: tasks for
// tools/call, tasks/list and tasks/cancel.
type tasksCapability struct {
	List     struct{} `json:"list"`
	Cancel   struct{} `json:"cancel"`
	Requests struct {
		Tools struct {
			Call struct{} `json:"call"`
		} `json:"tools"`
	} `json:"requests"`
}

// capabilities are the server's capabilities in a session: tasks only
// where the session speaks them.
func capabilities(tasks bool) serverCapabilities {
	c := serverCapabilities{Tools: struct{}{}}
	if tasks {
		c.Tasks = &tasksCapability{}
	}
	return c
}

// formElicitation reports whether a client's elicitation capability
// includes form mode: {"form": {}}, or {} as 2025-06-18 declared it (MCP
// 2025-11-25 reads an empty object as form mode only); {"url": {}} alone
// does not. Elicitation came with 2025-06-18.
func formElicitation(raw json.RawMessage) bool {
	if !isObject(raw) {
		return false
	}
	var modes map[string]json.RawMessage
	if json.Unmarshal(raw, &modes) != nil {
		return false
	}
	form, hasForm := modes["form"]
	_, hasURL := modes["url"]
	if hasForm {
		return isObject(form)
	}
	return !hasURL
}

// versionHasTasks reports whether a protocol version has MCP's tasks
// utility: it came with 2025-11-25; 2025-06-18 and 2025-03-26 have no
// tasks capability, task parameter, tasks/* methods or execution member.
func versionHasTasks(version string) bool { return version == versionPreferred }

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// clientInfo decodes {"name": string, "version": string}; other members are
// ignored.
func clientInfo(raw json.RawMessage) (implementation, bool) {
	if !isObject(raw) {
		return implementation{}, false
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(raw, &p) != nil {
		return implementation{}, false
	}
	name, ok1 := jsonString(p["name"])
	version, ok2 := jsonString(p["version"])
	if !ok1 || !ok2 {
		return implementation{}, false
	}
	return implementation{Name: name, Version: version}, true
}
