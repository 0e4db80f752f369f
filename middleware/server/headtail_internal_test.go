package server

import (
	"bytes"
	"strings"
	"testing"
)

func TestHeadTailKeepsTheEndsAndCountsTheRest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"short", []string{"ab", "c"}, "abc"},
		{"exactly both", []string{"abcd", "efgh"}, "abcdefgh"},
		{"one big write", []string{"0123456789"}, "0123\n[... 2 bytes omitted ...]\n6789"},
		{"many small writes", strings.Split("0123456789abcdef", ""), "0123\n[... 8 bytes omitted ...]\ncdef"},
		{"ring wraps mid-write", []string{"0123", "45", "678", "9abcdefgh", "ij"}, "0123\n[... 12 bytes omitted ...]\nghij"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHeadTail(4)
			for _, w := range tc.writes {
				if n, err := h.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := h.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHeadTailMemoryIsBounded(t *testing.T) {
	t.Parallel()
	h := newHeadTail(healOutputEnd)
	chunk := bytes.Repeat([]byte("y\n"), 16<<10)
	for range 3200 { // 100 MiB, as `yes | head -c 100000000`
		h.Write(chunk)
	}
	if c := cap(h.head) + cap(h.tail); c > 4*healOutputEnd {
		t.Errorf("holds %d bytes for 100 MiB written, want at most %d", c, 4*healOutputEnd)
	}
	if s := h.String(); !strings.Contains(s, "bytes omitted") || len(s) > 2*healOutputEnd+64 {
		t.Errorf("String() is %d bytes", len(s))
	}
}
