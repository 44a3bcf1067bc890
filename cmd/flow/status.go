package main

import "context"

// cmdStatus implements `flow status`: the effective configuration, the
// workspace's state and its last run. It never contacts the model.
func cmdStatus(ctx context.Context, e *env) (any, string, error) {
	rt, err := openRuntime(e, false)
	if err != nil {
		return nil, "", err
	}
	defer rt.Close()
	st := rt.service(nil).Status(ctx)
	return st, st.Status, nil
}
