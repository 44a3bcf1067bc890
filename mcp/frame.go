package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// MaxFrameBytes is the largest input frame the server accepts: 1 MiB,
// counting the frame's newline (doc/design.md §15).
const MaxFrameBytes = 1 << 20

// errFrameTooLarge reports a line longer than [MaxFrameBytes].
var errFrameTooLarge = errors.New("frame exceeds 1 MiB")

// frameReader splits its input into newline-terminated frames of at most
// max bytes. It never reads more than one buffer beyond an oversized frame.
type frameReader struct {
	br  *bufio.Reader
	max int
}

func newFrameReader(r io.Reader, max int) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next frame without its newline. A last line that ends at
// end of input without a newline is a frame too. It returns io.EOF at the
// end of input and errFrameTooLarge for a line over the limit, after which
// the reader must not be used again.
func (f *frameReader) next() ([]byte, error) {
	var frame []byte
	for {
		chunk, err := f.br.ReadSlice('\n')
		if len(frame)+len(chunk) > f.max {
			return nil, errFrameTooLarge
		}
		frame = append(frame, chunk...)
		switch {
		case err == nil:
			return frame[:len(frame)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(frame) > 0:
			return frame, nil
		default:
			return nil, err
		}
	}
}

// isBlank reports whether a frame holds only JSON whitespace.
func isBlank(frame []byte) bool {
	return len(bytes.Trim(frame, " \t\r\n")) == 0
}

// message is a JSON-RPC request or notification that passed the envelope
// checks of doc/design.md §10.2, or a response to a request the server
// sent (response set, method empty).
type message struct {
	id     json.RawMessage // nil for a notification
	method string
	params json.RawMessage // nil when absent
	// response: the message answers the server's request id, with result
	// or with err, a JSON-RPC error object.
	response bool
	result   json.RawMessage
	err      json.RawMessage
}

// rpcError is a JSON-RPC error to send back.
type rpcError struct {
	code    int
	message string
	data    any
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d %s", e.code, e.message) }

// JSON-RPC and MCP error codes.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	codeNotInitialized = -32002
)

var (
	errParse        = &rpcError{code: codeParseError, message: "Parse error"}
	errBatch        = &rpcError{code: codeInvalidRequest, message: "Invalid Request: expected one JSON-RPC object, not a batch"}
	errInvalid      = &rpcError{code: codeInvalidRequest, message: "Invalid JSON-RPC request"}
	errTooLarge     = &rpcError{code: codeParseError, message: "Frame exceeds 1 MiB; connection closing"}
	errNotReady     = &rpcError{code: codeNotInitialized, message: "Initialize and send notifications/initialized first"}
	errParamsObject = &rpcError{code: codeInvalidParams, message: "Params must be an object"}
)

// parseMessage checks one frame: valid UTF-8 JSON (-32700), one object
// (-32600, batches are not supported), "jsonrpc":"2.0", a string method and,
// when present, a string or integer id (-32600). A frame without method
// that has a valid id and exactly one of result and error (an object) is
// a response to one of the server's requests. Errors from here are sent
// with a null id, whatever the frame's id was.
func parseMessage(frame []byte) (message, *rpcError) {
	if !utf8.Valid(frame) || !json.Valid(frame) {
		return message{}, errParse
	}
	if !isObject(frame) {
		return message{}, errBatch
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(frame, &fields); err != nil {
		return message{}, errParse
	}
	if v, ok := jsonString(fields["jsonrpc"]); !ok || v != "2.0" {
		return message{}, errInvalid
	}
	method, ok := jsonString(fields["method"])
	if _, present := fields["method"]; !present {
		return parseResponse(fields)
	}
	if !ok {
		return message{}, errInvalid
	}
	m := message{method: method, params: fields["params"]}
	if id, present := fields["id"]; present {
		if !validID(id) {
			return message{}, errInvalid
		}
		m.id = id
	}
	return m, nil
}

// parseResponse checks a frame without method as a response: a valid id
// and exactly one of result and error, an object (-32600 otherwise).
func parseResponse(fields map[string]json.RawMessage) (message, *rpcError) {
	id, result, rerr := fields["id"], fields["result"], fields["error"]
	if !validID(id) || (result == nil) == (rerr == nil) || (rerr != nil && !isObject(rerr)) {
		return message{}, errInvalid
	}
	return message{id: id, response: true, result: result, err: rerr}, nil
}

// isObject reports whether a valid JSON value is an object.
func isObject(raw []byte) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// jsonString decodes raw when it is a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// validID reports whether raw is a JSON-RPC id flow accepts: a string or an
// integer (no fraction or exponent). null, booleans, floats, objects and
// arrays are invalid (doc/design.md §10.2).
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		return true
	}
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return false
	}
	return !bytes.ContainsAny(raw, ".eE")
}

// idKey is a canonical form of a valid id, so that a cancellation naming the
// same id with a different spelling ("\u0061" for "a") still matches.
func idKey(raw json.RawMessage) string {
	if s, ok := jsonString(raw); ok {
		return "s:" + s
	}
	n := string(raw)
	if n == "-0" {
		n = "0"
	}
	return "n:" + n
}
