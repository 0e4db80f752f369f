package loadgen

import (
	"slices"
	"testing"
)

func TestSecondMerger(t *testing.T) {
	var got []Second
	m := newSecondMerger(2, func(s Second) { got = append(got, s) })
	m.add(Second{T: 10, Open: 3, BytesUp: 100, ProbeMaxMS: 5})
	if len(got) != 0 {
		t.Fatalf("second 10 shown before both processes reported it: %v", got)
	}
	m.add(Second{T: 10, Open: 4, BytesUp: 50, ProbeMaxMS: 7})
	// Process 1 stops reporting: second 12 is shown once both have it,
	// and the incomplete second 11 is dropped.
	m.add(Second{T: 11, Open: 3})
	m.add(Second{T: 12, Open: 3})
	m.add(Second{T: 12, Open: 1})
	m.add(Second{T: 11, Open: 1}) // late: already past
	want := []Second{{T: 10, Open: 7, BytesUp: 150, ProbeMaxMS: 7}, {T: 12, Open: 4}}
	if !slices.Equal(got, want) {
		t.Errorf("shown %+v, want %+v", got, want)
	}
}
