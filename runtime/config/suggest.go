package config

import "strings"

// Suggest returns the candidate closest to name when it is close enough to
// be a typo of it (an edit distance of at most a third of its length, and at
// most 3, counting a swap of neighbours as one edit), or "". Case
// differences alone always match. flow uses it for mistyped configuration
// keys and subcommands.
func Suggest(name string, candidates []string) string {
	best, bestDist := "", 1<<30
	limit := min(max(1, len([]rune(name))/3), 3)
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d <= limit && d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of adjacent runes.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// prev2, prev and cur are rows i-2, i-1 and i of the distance table.
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}

// didYouMean is " (did you mean X?)" for the closest candidate, or "".
func didYouMean(name string, candidates []string) string {
	if s := Suggest(name, candidates); s != "" && s != name {
		return " (did you mean " + s + "?)"
	}
	return ""
}
