package scenarios

import (
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/tunnelprobe/tunnelprobe/internal/exclusive"
)

func TestMain(m *testing.M) {
	setTestcontainersEnv()
	goleak.VerifyTestMain(m)
}

// containersLoaded is closed once the container suite's topologies have
// had their loaded phase, or nil when the suite does not run here: it is
// made in the suite's sequential part (before its t.Parallel), so that
// TestLoadedRuns, parallel too, knows whether to wait for it.
var containersLoaded chan struct{}

// markContainersLoading makes containersLoaded, and returns the func that
// closes it (once; also when t ends).
func markContainersLoading(t *testing.T) (loaded func()) {
	ch := make(chan struct{})
	containersLoaded = ch
	loaded = sync.OnceFunc(func() { close(ch) })
	t.Cleanup(loaded)
	return loaded
}

// loadedRun is a test that loads a link on this machine and judges what it
// measures (a run's utilisation, its detection times).
type loadedRun struct {
	name string
	run  func(*testing.T)
}

// TestLoadedRuns runs the package's tests that load a link on this machine
// one at a time, each with the machine's turn (package exclusive: the other
// packages' loaded runs take turns too), since beside each other each would
// measure the others; and beside the container suite once its topologies
// have had their loaded phase to themselves: most of the suite's minutes
// are spent waiting out its faults.
func TestLoadedRuns(t *testing.T) {
	t.Parallel()
	if containersLoaded != nil {
		<-containersLoaded // closed at the latest when the suite ends
	}
	runs := append([]loadedRun{
		{"RunSmallScenario", testRunSmallScenario},
		{"RunMTUBlackHole", testRunMTUBlackHole},
		{"RunInterruptedIsJudgedOnWhatRan", testRunInterruptedIsJudgedOnWhatRan},
		{"RunQuietTargetUnderLoad", testRunQuietTargetUnderLoad},
		{"RunGRPCProber", testRunGRPCProber},
	}, openvpnRuns...)
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			exclusive.Machine(t)
			r.run(t)
		})
	}
}
