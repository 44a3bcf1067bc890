package tools

import "reflect"

// Schema returns the input schema of the argument struct A, generated from
// its tags exactly as a built-in tool's is (see args.go): a closed object
// with one property a field and the required list in field order. Another
// package's tools use it to advertise the same kind of schema the model
// tools have. Each call returns a fresh value the caller may change. A
// field the machinery does not support panics.
func Schema[A any]() map[string]any {
	return paramsOf(reflect.TypeFor[A]())
}

// Usage describes the arguments of A in one line, as the model tools'
// argument errors do: {"task": string, "wait_seconds"?: integer}.
func Usage[A any]() string { return usageOf(Schema[A]()) }

// Parse decodes raw, which must be one JSON object, into a new A, checked
// as a built-in tool's arguments are: [ValidateArgs] against Schema[A]
// (exact types, closed object, required keys), then the min and max tags.
// The error text says what is wrong in the words the model tools use, for
// example `missing arguments: [task]` or `argument "wait_seconds" must be
// at least 0, got -1`, without naming a tool, so a caller can prefix its
// own. Unlike [DecodeArgs], it refuses empty text and null: they stand for
// {} only in a model's tool call, where "no arguments" arrives as either; a
// caller whose arguments are absent passes {}.
func Parse[A any](raw []byte) (A, error) {
	var zero A
	args, err := decodeObject(string(raw))
	if err != nil {
		return zero, err
	}
	v, err := parseArgs(reflect.TypeFor[A](), args)
	if err != nil {
		return zero, err
	}
	return v.(A), nil
}
