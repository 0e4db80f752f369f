package main

import (
	"flag"
	"strconv"
	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
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
	fs.Var(delayValue{&l.set.Delay}, prefix+"delay", scope+"one-way link `delay` (a Go duration)")
	fs.TextVar(&l.set.Queue, prefix+"queue", l.set.Queue, scope+"tail-drop queue `limit` per direction: packets (\"300p\") or bytes (\"256KB\")")
	fs.Var(lossValue{&l.set.Loss}, prefix+"loss", scope+"random loss `probability`, 0..1 or \"1%\"")
	fs.Uint64Var(&l.seed, prefix+"seed", 1, scope+"`seed` of the random loss")
	return l
}

// delayValue is a link delay flag, read by harness.ParseDelay.
type delayValue struct{ d *time.Duration }

func (v delayValue) String() string {
	if v.d == nil {
		return ""
	}
	return v.d.String()
}

func (v delayValue) Set(s string) error {
	d, err := harness.ParseDelay(s)
	if err == nil {
		*v.d = d
	}
	return err
}

// lossValue is a loss probability flag, read by harness.ParseLoss.
type lossValue struct{ p *float64 }

func (v lossValue) String() string {
	if v.p == nil {
		return ""
	}
	return strconv.FormatFloat(*v.p, 'g', -1, 64)
}

func (v lossValue) Set(s string) error {
	p, err := harness.ParseLoss(s)
	if err == nil {
		*v.p = p
	}
	return err
}
