// Package target reads check targets, the one syntax in which the binary's
// serve --target, load --probe and scenario specs name what to check
// ("tls://1.1.1.1", "icmp://1.1.1.1", ...), into checks of package
// middleware/check. [Parse] reads one target, [ParseList] several, and [Default]
// is what a kind of check checks when given none; [Options] say how the
// checks dial and verify. Parsing starts nothing and opens nothing.
package target
