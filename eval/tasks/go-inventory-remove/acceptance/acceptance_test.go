package inventory

import "testing"

func TestAcceptanceRemoveTooMany(t *testing.T) {
	s := New()
	if err := s.Add("pear", 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("pear", 5); err == nil {
		t.Error("Remove of 5 with 3 in stock returned no error")
	}
	if got := s.Count("pear"); got != 3 {
		t.Errorf("Count after the refused Remove = %d, want 3", got)
	}
	if err := s.Remove("plum", 1); err == nil {
		t.Error("Remove of an item never added returned no error")
	}
	if got := s.Count("plum"); got != 0 {
		t.Errorf("Count(plum) = %d, want 0", got)
	}
	if err := s.Remove("pear", 3); err != nil {
		t.Errorf("Remove of exactly what is in stock: %v", err)
	}
	if got := s.Count("pear"); got != 0 {
		t.Errorf("Count after removing all = %d, want 0", got)
	}
}
