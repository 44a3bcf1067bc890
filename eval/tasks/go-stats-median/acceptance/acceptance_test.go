package stats

import "testing"

func TestAcceptanceMedian(t *testing.T) {
	cases := []struct {
		in   []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4, 5, 6}, 3.5},
		{[]float64{2, 1}, 1.5},
		{[]float64{5, 1, 3}, 3},
		{[]float64{7}, 7},
		{nil, 0},
	}
	for _, c := range cases {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	in := []float64{3, 1, 2, 4}
	Median(in)
	if in[0] != 3 || in[3] != 4 {
		t.Errorf("Median modified its input: %v", in)
	}
}
