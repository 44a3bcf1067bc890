package inventory

import "testing"

func TestAddRemove(t *testing.T) {
	s := New()
	if err := s.Add("apple", 5); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("apple", 2); err != nil {
		t.Fatal(err)
	}
	if got := s.Count("apple"); got != 3 {
		t.Errorf("Count = %d, want 3", got)
	}
}

func TestBadQuantity(t *testing.T) {
	s := New()
	if err := s.Add("apple", 0); err != ErrBadQuantity {
		t.Errorf("Add(0) = %v, want ErrBadQuantity", err)
	}
}
