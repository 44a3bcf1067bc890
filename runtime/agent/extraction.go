package agent

import (
	"context"

	"flow/runtime/model"
)

// source says where a turn's tool calls came from.
type source int

const (
	fromNative source = iota // the API's own tool calls
	fromText                 // tool calls written as text in the reply
	fromCode                 // file_edit calls made from the answer's code blocks
)

// extraction is a turn's tool calls and where they came from; paths are
// the files the calls change, for calls made from code.
type extraction struct {
	calls  []model.ToolCall
	source source
	paths  []string
	// refused maps the index of each call made from the answer that is
	// answered with an error instead of being run (a whole file that
	// leaves code out) to that error.
	refused map[int]string
}

// extractor finds a reply's tool calls one way; ok is false when this way
// finds none.
type extractor func(ctx context.Context, s *session, resp model.Response) (extraction, bool)
