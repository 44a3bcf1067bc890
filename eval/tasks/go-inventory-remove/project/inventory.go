// Package inventory keeps counts of items in stock.
package inventory

import "errors"

// ErrBadQuantity is returned for a quantity that is not positive.
var ErrBadQuantity = errors.New("quantity must be positive")

// Stock is the count of each item in stock.
type Stock struct {
	counts map[string]int
}

// New returns an empty stock.
func New() *Stock {
	return &Stock{counts: map[string]int{}}
}

// Add puts n more of item in stock.
func (s *Stock) Add(item string, n int) error {
	if n <= 0 {
		return ErrBadQuantity
	}
	s.counts[item] += n
	return nil
}

// Remove takes n of item out of stock.
func (s *Stock) Remove(item string, n int) error {
	if n <= 0 {
		return ErrBadQuantity
	}
	s.counts[item] -= n
	return nil
}

// Count is how many of item are in stock.
func (s *Stock) Count(item string) int {
	return s.counts[item]
}
