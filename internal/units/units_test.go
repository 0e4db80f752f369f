package units

import "testing"

func TestBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 999: "999 B", 1500: "1.50 kB", 2_100_000: "2.10 MB", 3e15: "3.00 PB", 4e18: "4000.00 PB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 1204: "1,204", 1234567: "1,234,567"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
