// Package peakrss reads the process's peak resident memory, which the
// scenario and matrix reports record.
package peakrss
