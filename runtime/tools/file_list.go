package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"flow/runtime/report"
)

//go:embed file_list.md
var fileListRaw string

var fileListDoc = strings.TrimSpace(fileListRaw)

// fileListArgs are the arguments of file_list.
type fileListArgs struct {
	Path *string `json:"path,omitempty" desc:"directory relative to the workspace root (default \".\")"`
}

// listBody is the result of file_list.
type listBody struct {
	Status    string   `json:"status"`
	Path      string   `json:"path"`
	Files     []string `json:"files"`
	Truncated bool     `json:"truncated"`
	Hint      string   `json:"hint,omitempty"`
}

// fileList implements file_list.
func (r *Registry) fileList(ctx context.Context, args fileListArgs) Result {
	p, ok := given(args.Path)
	if !ok {
		p = "."
	}
	l, err := r.fs.List(ctx, p)
	if err != nil {
		return fsError(FileList, p, err)
	}
	body := listBody{Status: report.StatusOK, Path: cleanPath("", p), Files: l.Files, Truncated: l.Truncated}
	if body.Files == nil {
		body.Files = []string{}
	}
	if body.Truncated {
		body.Hint = fmt.Sprintf("the listing stopped at %d files; list a subdirectory, or use file_search with a glob", len(body.Files))
	}
	content, truncated := fit(report.StatusOK, len(body.Files), func(keep int) any {
		if keep >= len(body.Files) {
			return body
		}
		b := body
		b.Files = body.Files[:keep]
		b.Truncated = true
		b.Hint = fmt.Sprintf("only %d of %d files fit in the result; list a subdirectory, or use file_search with a glob",
			keep, len(body.Files))
		return b
	})
	return Result{Status: report.StatusOK, Content: content, Truncated: truncated}
}
