package middleware

// MultiObserver returns an Observer that tells each of observers, in order,
// of every event. It is also a [CoalesceObserver] and a
// [LightProbeObserver]: joins and light probes go to those of observers
// that are one. Nil entries are skipped.
func MultiObserver(observers ...Observer) Observer {
	var m multiObserver
	for _, o := range observers {
		if o != nil {
			m = append(m, o)
		}
	}
	return m
}

type multiObserver []Observer

var (
	_ Observer           = multiObserver(nil)
	_ CoalesceObserver   = multiObserver(nil)
	_ LightProbeObserver = multiObserver(nil)
)

func (m multiObserver) CheckStarted(s CheckStart) {
	for _, o := range m {
		o.CheckStarted(s)
	}
}

func (m multiObserver) CheckFinished(r Result) {
	for _, o := range m {
		o.CheckFinished(r)
	}
}

func (m multiObserver) StateChanged(from, to Snapshot) {
	for _, o := range m {
		o.StateChanged(from, to)
	}
}

func (m multiObserver) HealStarted(s HealStart) {
	for _, o := range m {
		o.HealStarted(s)
	}
}

func (m multiObserver) Healed(e HealEvent) {
	for _, o := range m {
		o.Healed(e)
	}
}

func (m multiObserver) CheckJoined(j CheckJoin) {
	for _, o := range m {
		if c, ok := o.(CoalesceObserver); ok {
			c.CheckJoined(j)
		}
	}
}

func (m multiObserver) LightProbeFinished(r LightProbeResult) {
	for _, o := range m {
		if p, ok := o.(LightProbeObserver); ok {
			p.LightProbeFinished(r)
		}
	}
}
