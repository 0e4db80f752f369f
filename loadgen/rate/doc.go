// Package rate is a rate in bits per second, as the lab's link shapes it
// and the load generator paces its connections: one type, [Rate], one
// parser, [Parse], for flags, specs, JSON and Go code alike.
//
// A Rate is text: it reads "20mbit", "5MB/s", "100kbit", a plain number of
// bits per second or "unlimited" (zero), and writes the largest bit unit
// that represents it exactly, so that every Rate survives a round trip. In
// JSON a bare number of bits per second is taken too.
//
// It is a package of its own, importing nothing of the project, so that
// the lab (package harness) uses it without the load generator.
package rate
