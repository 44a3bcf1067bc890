package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// Requests from the server to the client (doc/design.md §10.12): the
// server sends one with an id of its own and waits for the response, which
// the frame loop hands back by its id. When the client's input ends no
// response can come, and every waiter is told so at once.

// peerRequests are a session's requests to its client that await their
// response.
type peerRequests struct {
	out *wire

	mu      sync.Mutex
	next    int
	pending map[string]chan peerResponse // by idKey
	closed  bool                         // the input ended: nothing more can be answered
}

// peerResponse is the client's response to one request: its result, or
// its error object.
type peerResponse struct {
	result json.RawMessage
	err    *errorObject
}

// outgoingRequest is a JSON-RPC request the server sends.
type outgoingRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  any             `json:"params"`
}

// cancelledParams are the params of notifications/cancelled.
type cancelledParams struct {
	RequestID json.RawMessage `json:"requestId"`
	Reason    string          `json:"reason,omitempty"`
}

// errNoAnswer reports a request whose response cannot come: the client's
// input ended first.
var errNoAnswer = errors.New("the client's input ended, so no answer can come")

func newPeerRequests(out *wire) *peerRequests {
	return &peerRequests{out: out, pending: make(map[string]chan peerResponse)}
}

// call sends method with params to the client and waits for its
// response: its result, an error for an error response, errNoAnswer when
// the input ends first, or ctx's cause when ctx ends first, after which
// the client is told with notifications/cancelled that the server no
// longer waits.
func (p *peerRequests) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errNoAnswer
	}
	p.next++
	id := json.RawMessage(strconv.Quote(fmt.Sprintf("flow-%d", p.next)))
	ch := make(chan peerResponse, 1)
	p.pending[idKey(id)] = ch
	p.mu.Unlock()
	defer p.forget(id)
	if err := p.out.send(outgoingRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params}); err != nil {
		return nil, err
	}
	select {
	case r, ok := <-ch:
		switch {
		case !ok:
			return nil, errNoAnswer
		case r.err != nil:
			return nil, fmt.Errorf("the client answered %s with error %d: %s", method, r.err.Code, r.err.Message)
		}
		return r.result, nil
	case <-ctx.Done():
		cause := context.Cause(ctx)
		_ = p.out.notify("notifications/cancelled", cancelledParams{RequestID: id, Reason: cause.Error()})
		return nil, cause
	}
}

// forget drops the waiter of id.
func (p *peerRequests) forget(id json.RawMessage) {
	p.mu.Lock()
	delete(p.pending, idKey(id))
	p.mu.Unlock()
}

// deliver hands a response to the request it answers; it reports false
// when no request of this session awaits that id (a late or stray
// response, which is dropped).
func (p *peerRequests) deliver(m message) bool {
	p.mu.Lock()
	ch, ok := p.pending[idKey(m.id)]
	delete(p.pending, idKey(m.id))
	p.mu.Unlock()
	if !ok {
		return false
	}
	r := peerResponse{result: m.result}
	if m.err != nil {
		r.err = &errorObject{}
		if json.Unmarshal(m.err, r.err) != nil {
			r.err = &errorObject{Code: codeInternalError, Message: "malformed error object"}
		}
	}
	ch <- r
	return true
}

// ended reports whether the client's input has ended, so that no request
// sent now could be answered.
func (p *peerRequests) ended() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// abandon tells every waiter, and every later call, that no response can
// come: the client's input has ended.
func (p *peerRequests) abandon() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for k, ch := range p.pending {
		close(ch)
		delete(p.pending, k)
	}
}
