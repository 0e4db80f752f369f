package middleware

// Counters are a tunnel's traffic totals since some moment (its device's
// creation, say): what the tunnel received (Rx) and sent (Tx). Totals only
// grow; totals that fall mean the device was made anew.
type Counters struct {
	RxBytes, TxBytes uint64
	// RxPackets and TxPackets are 0 for a source that counts bytes only.
	RxPackets, TxPackets uint64
}

// A CounterSource reads a tunnel's counters: a network interface
// (InterfaceCounters), a WireGuard device (package middleware/wgstats),
// the lab's client peer (package harness). ReadCounters must be quick, a
// file or socket read: proof of life calls it every Evidence.Interval
// (0.25 s by default).
type CounterSource interface {
	ReadCounters() (Counters, error)
}

// CounterSourceFunc adapts a function to a CounterSource.
type CounterSourceFunc func() (Counters, error)

// ReadCounters calls f.
func (f CounterSourceFunc) ReadCounters() (Counters, error) { return f() }
