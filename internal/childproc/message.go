package childproc

// Message is one line a child writes to its parent, in JSON: exactly one of
// its fields is set. Data carries the command's own payload, M.
type Message[M any] struct {
	// Ready says the child is set up: it listens, or waits for its start.
	Ready bool `json:"ready,omitempty"`
	// Data is a report of the command's own, for Fleet.Receive.
	Data *M `json:"data,omitempty"`
	// Error is why the child gives up.
	Error string `json:"error,omitempty"`
}
