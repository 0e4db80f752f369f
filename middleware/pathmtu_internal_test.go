package middleware

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// pathRig drives a pathMTU over a path that carries IP packets of up to
// carries bytes, one big probe a second, each followed by a small probe
// that is answered (the tunnel works) unless down.
type pathRig struct {
	t   *testing.T
	s   *pathMTU
	now time.Time
}

func newPathRig(t *testing.T) *pathRig {
	return &pathRig{t: t, s: &pathMTU{every: 4}, now: evidenceEpoch}
}

// probe sends one big probe with the interface's MTU at mtu and returns
// its size.
func (r *pathRig) probe(mtu, carries int, down bool) int {
	sent := r.now
	size := r.s.next(sent, mtu)
	r.now = r.now.Add(250 * time.Millisecond)
	if size <= carries && !down {
		r.s.answered(sent, r.now)
	}
	if !down {
		r.s.laterAnswered(r.now, r.now.Add(10*time.Millisecond)) // the small probe after it
	}
	r.now = r.now.Add(750 * time.Millisecond)
	r.s.expire(r.now.Add(-10*time.Second), r.now.Add(-time.Minute))
	return size
}

// The search finds the largest size the path carries, to within its
// step, and a Window after the first full-size probe was lost a black
// hole names both sizes; it ends once the full MTU is answered again.
func TestPathMTUSearchFindsTheLargestSizeAndTheBlackHole(t *testing.T) {
	r := newPathRig(t)
	var sizes []int
	for range 12 {
		sizes = append(sizes, r.probe(1420, 1300, false))
	}
	if sizes[0] != 1420 {
		t.Errorf("first big probe %d bytes, want the interface's MTU 1420", sizes[0])
	}
	if got := r.s.largest(); got < 1300-mtuSearchStep || got > 1300 {
		t.Errorf("largest answered %d after %v, want within %d below 1300", got, sizes, mtuSearchStep)
	}
	err := r.s.blackHole(r.now, 3*time.Second)
	if !errors.Is(err, ErrPathMTU) || !strings.Contains(err.Error(), " bytes answered, ") || !strings.Contains(err.Error(), "the interface's MTU is 1420") {
		t.Fatalf("black hole: %v", err)
	}
	// Converged, it keeps retrying the full MTU: once the path carries it
	// again, the black hole ends.
	for range 8 {
		r.probe(1420, 1500, false)
	}
	if err := r.s.blackHole(r.now, 3*time.Second); err != nil {
		t.Errorf("the path carries 1500 again: %v", err)
	}
	if got := r.s.largest(); got != 1420 {
		t.Errorf("largest %d, want 1420", got)
	}
}

// An outage, in which nothing is answered, says nothing of the MTU: no
// black hole, whatever was lost.
func TestPathMTUOutageIsNoBlackHole(t *testing.T) {
	r := newPathRig(t)
	for range 4 {
		r.probe(1420, 1500, false)
	}
	for range 20 {
		r.probe(1420, 1500, true)
	}
	if err := r.s.blackHole(r.now, 3*time.Second); err != nil {
		t.Errorf("outage: %v", err)
	}
}

// A new interface MTU starts the search over at it.
func TestPathMTUFollowsTheInterfacesMTU(t *testing.T) {
	r := newPathRig(t)
	for range 12 {
		r.probe(1420, 1300, false)
	}
	if size := r.probe(1280, 1300, false); size != 1280 {
		t.Errorf("after the MTU changed to 1280: a probe of %d bytes, want 1280", size)
	}
	if err := r.s.blackHole(r.now, 3*time.Second); err != nil {
		t.Errorf("1280 carried: %v", err)
	}
}

// A new tunnel's path is measured anew: the old one's black hole is
// forgotten, and the next big probe is of the full MTU (issue 46: after a
// heal onto a good path, checks failed "black hole" for 19 s more).
func TestPathMTUNewTunnelForgetsTheOldPath(t *testing.T) {
	r := newPathRig(t)
	for range 12 {
		r.probe(1420, 1300, false)
	}
	if err := r.s.blackHole(r.now, 3*time.Second); err == nil {
		t.Fatal("no black hole on the old path")
	}
	// A heal or a new interface: the proof of life forgets its tunnel.
	p := newProofOfLife(Evidence{MTUProbeEvery: 4}, LightProbe{
		Sized: func(context.Context, int) error { return nil },
		MTU:   func() (int, error) { return 1420, nil },
	}, clockwork.NewFakeClockAt(r.now), nil, newChanges())
	p.mtu = r.s
	p.forgetTunnel(r.now)
	if err := r.s.blackHole(r.now, 3*time.Second); err != nil {
		t.Errorf("after a new tunnel: %v, want no black hole until its path shows one", err)
	}
	if size := r.probe(1420, 1500, false); size != 1420 {
		t.Errorf("the new tunnel's first big probe: %d bytes, want the full MTU 1420", size)
	}
	if err := r.s.blackHole(r.now, 3*time.Second); err != nil || r.s.mtu != 1420 {
		t.Errorf("the new path carries the full MTU: %v (MTU %d), want no black hole and the MTU kept", err, r.s.mtu)
	}

	// A hole that a heal does not cure is reported again as soon as the
	// new tunnel loses its first probe of the full MTU, not a Window later.
	for range 12 {
		r.probe(1420, 1300, false)
	}
	r.s.forget()
	if size := r.probe(1420, 1300, false); size != 1420 {
		t.Fatalf("after the heal, first big probe %d bytes, want 1420", size)
	}
	if err := r.s.blackHole(r.now, 3*time.Second); !errors.Is(err, ErrPathMTU) {
		t.Errorf("the hole outlived the heal: %v, want it reported at once", err)
	}
}
