package loadgen

import "slices"

// A DescriptorShortfall is a sweep that asks a process for more
// connections than it may open descriptors: the rest would only fail with
// too_many_open_files.
type DescriptorShortfall struct {
	// PerProcess is the count of connections of the busiest process at
	// the sweep's largest level.
	PerProcess int
	// Limit is how many descriptors a process may open.
	Limit int
	// Procs is the count of processes that would hold the largest level.
	Procs int
}

// reservedDescriptors are the descriptors a process keeps for itself
// rather than for connections: its stdio, the poller, a sink.
const reservedDescriptors = 64

// DescriptorShortfall returns the shortfall of s in processes that may
// each open limit descriptors (OpenFileLimit), one a connection, or nil
// when each has enough or limit is 0 (unknown). A run through an
// in-process netstack takes no descriptors: its caller does not ask.
func (s Sweep) DescriptorShortfall(limit int) *DescriptorShortfall {
	if limit == 0 {
		return nil
	}
	procs := max(s.Procs, 1)
	most := slices.Max(s.LevelCounts())
	perProc := (most + procs - 1) / procs
	// A limit below the reserve still leaves the connections one each.
	usable := max(limit-reservedDescriptors, 1)
	if perProc <= usable {
		return nil
	}
	return &DescriptorShortfall{PerProcess: perProc, Limit: limit, Procs: (most + usable - 1) / usable}
}
