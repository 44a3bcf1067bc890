package main

import "context"

// cmdStatus implements `flow status`: the effective configuration, the
// workspace's state and its last run. It never contacts the model.
func cmdStatus(ctx context.Context, e *env) (any, string, error) {
	svc, closeAll, err := openService(e)
	if err != nil {
		return nil, "", err
	}
	defer closeAll()
	st := svc.Status(ctx)
	return st, st.Status, nil
}
