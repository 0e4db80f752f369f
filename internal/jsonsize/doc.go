// Package jsonsize tells, before a JSON document is decoded, how much memory
// encoding/json will take to decode it into a value of a Go type, so that a
// reader can refuse a file that is small on disk and huge in memory: an
// array decodes into as many whole elements as it has, however few bytes
// each is written in, so a few megabytes of {} become gigabytes. [Of] walks
// the document once, guided by the type, and allocates nothing in
// proportion to it; [Bound] refuses a document past an allowance, naming
// its largest array.
//
// Its functions start no goroutine and are safe for concurrent use: each
// call keeps its state to itself.
package jsonsize
