// Package rate is a rate in bits per second, as the lab's link shapes it
// and the load generator paces its connections: one type, [Rate], one
// parser, [Parse], for flags, specs, JSON and Go code alike.
//
// A Rate is text: it reads "20mbit", "5MB/s", "100kbit", a plain number of
// bits per second or "unlimited" (zero), and writes the largest bit unit
// that represents it exactly, so that every Rate survives a round trip. In
// JSON a bare number of bits per second is taken too.
//
// The package imports neither the lab nor the load generator, so that
// both use it without importing each other.
package rate
