package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// wire is the single writer of a session: every outgoing line (responses,
// errors, progress notifications) is encoded, then written with one Write
// call under one mutex, so lines never interleave and their order is the
// order of the send calls. After the first write error it drops everything
// and closes dead; after shut it drops everything silently.
type wire struct {
	mu     sync.Mutex
	w      io.Writer
	err    error
	dead   chan struct{}
	closed bool
}

// errShut is returned for lines dropped after shut.
var errShut = errors.New("session interrupted: output shut")

func newWire(w io.Writer) *wire {
	return &wire{w: w, dead: make(chan struct{})}
}

// response is a JSON-RPC response object. A nil ID is written as null.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *errorObject    `json:"error,omitempty"`
}

type errorObject struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// notification is a JSON-RPC notification object.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// result writes a successful response.
func (o *wire) result(id, result json.RawMessage) error {
	return o.send(response{JSONRPC: "2.0", ID: id, Result: result})
}

// error writes an error response; id nil means null.
func (o *wire) error(id json.RawMessage, e *rpcError) error {
	return o.send(response{JSONRPC: "2.0", ID: id, Error: &errorObject{Code: e.code, Message: e.message, Data: e.data}})
}

// notify writes a notification.
func (o *wire) notify(method string, params any) error {
	return o.send(notification{JSONRPC: "2.0", Method: method, Params: params})
}

// send encodes v as one compact line (UTF-8, no HTML escaping) and writes it.
func (o *wire) send(v any) error {
	line, err := encodeLine(v)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.err
	}
	if o.closed {
		return errShut
	}
	if _, err := o.w.Write(line); err != nil {
		o.err = err
		close(o.dead)
		return err
	}
	return nil
}

// shut makes every later send a no-op: an interrupted session writes
// nothing more.
func (o *wire) shut() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}

// isShut reports whether shut was called.
func (o *wire) isShut() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed
}

// failed returns the first write error, if any.
func (o *wire) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// encodeLine encodes v as compact JSON without HTML escaping, newline
// terminated.
func encodeLine(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// marshal is [encodeLine] without the newline.
func marshal(v any) (json.RawMessage, error) {
	b, err := encodeLine(v)
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b, []byte("\n")), nil
}
