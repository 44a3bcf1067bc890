package agent

import "strings"

// planCodeLeftOut stands in the coder's and reviewer's plan for a code
// block the planner wrote.
const planCodeLeftOut = "(code left out of the plan: the coder writes the change with file_edit)"

// withoutCode returns the plan with each fenced code block replaced by
// planCodeLeftOut. The planner's prompt asks for steps, not code; a small
// model writes the whole file anyway, and a coder handed that code answers
// that the change is made instead of making it (seen in the evaluation).
// An unclosed fence is left out to the plan's end. Inline code stays.
func withoutCode(plan string) string {
	if !strings.Contains(plan, "```") {
		return plan
	}
	var b strings.Builder
	in := false
	for line := range strings.SplitAfterSeq(plan, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			if !in {
				b.WriteString(planCodeLeftOut + "\n")
			}
			in = !in
			continue
		}
		if !in {
			b.WriteString(line)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
