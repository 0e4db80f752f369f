package main

import (
	"flag"
	"strconv"
	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
)

// linkFlags are the link's settings as flags, for lab, lab link and load
// --lab. Each is read by harness's one parser for it when it is set, so a
// bad value is a usage error naming its flag, with the parser's own words.
type linkFlags struct {
	set  harness.Settings
	seed uint64
}

// registerLinkFlags registers the link flags on fs, each name starting with
// prefix ("link-" for load) and each usage with scope ("with --lab: ").
func registerLinkFlags(fs *flag.FlagSet, prefix, scope string) *linkFlags {
	l := &linkFlags{set: harness.Settings{Rate: 20_000_000, Delay: 10 * time.Millisecond, Queue: harness.QueueLimit{Packets: 256}}}
	fs.TextVar(&l.set.Rate, prefix+"rate", l.set.Rate, scope+"link `rate` per direction: \"20mbit\", \"5MB/s\", \"100kbit\", bits/s, or \"unlimited\"")
	fs.Var(cliflag.Func(&l.set.Delay, harness.ParseDelay, time.Duration.String), prefix+"delay", scope+"one-way link `delay` (a Go duration)")
	fs.TextVar(&l.set.Queue, prefix+"queue", l.set.Queue, scope+"tail-drop queue `limit` per direction: packets (\"300p\") or bytes (\"256KB\")")
	fs.Var(cliflag.Func(&l.set.Loss, harness.ParseLoss, formatFloat), prefix+"loss", scope+"random loss `probability`, 0..1 or \"1%\"")
	// --link-mtu everywhere: the lab's --mtu would read as the tunnel's.
	fs.Var(cliflag.Func(&l.set.MTU, harness.ParseMTU, harness.FormatMTU), "link-mtu", scope+"largest IP packet the link carries, in `bytes`, its IPv4 and UDP headers\n"+
		"counted (WireGuard's 1420-byte inner packets are 1480 here): larger ones are dropped\n"+
		"silently, an MTU black hole; 0 or \"unlimited\" for no limit")
	fs.Uint64Var(&l.seed, prefix+"seed", 1, scope+"`seed` of the random loss")
	return l
}

func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
