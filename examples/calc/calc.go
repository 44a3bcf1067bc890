// Package calc is the demo project: Add has a bug for flow to fix.
package calc

// Add returns the sum of a and b.
func Add(a, b int) int {
	return a - b
}
