// The evaluation tasks' hidden acceptance tests live in this module of their
// own so that the flow module's `go build ./...` and `go vet ./...` never
// compile them; each task's project/ is a module of its own as well.
module flowevaltasks

go 1.22
