package matrix

import "gonum.org/v1/gonum/stat/distuv"

// confidence is the level of every interval in the reports.
const confidence = 0.95

// An Interval is a 95% confidence interval.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// A Rate is events per hour with its 95% interval.
type Rate struct {
	PerHour  float64  `json:"per_hour"`
	Interval Interval `json:"interval"`
}

// PoissonRate returns the rate of count events in hours of exposure, with
// the exact (Garwood) 95% interval of a Poisson count: for 0 events in an
// hour, 0 to 3.69 per hour. hours must be positive.
func PoissonRate(count int, hours float64) Rate {
	alpha := 1 - confidence
	k := float64(count)
	var low float64
	if count > 0 {
		low = distuv.ChiSquared{K: 2 * k}.Quantile(alpha/2) / 2
	}
	high := distuv.ChiSquared{K: 2*k + 2}.Quantile(1-alpha/2) / 2
	return Rate{PerHour: k / hours, Interval: Interval{Low: low / hours, High: high / hours}}
}

// ClopperPearson returns the exact 95% interval of a proportion: successes
// out of trials (trials > 0). For 0 of 6 it is 0 to 0.46.
func ClopperPearson(successes, trials int) Interval {
	alpha := 1 - confidence
	k, n := float64(successes), float64(trials)
	iv := Interval{Low: 0, High: 1}
	if successes > 0 {
		iv.Low = distuv.Beta{Alpha: k, Beta: n - k + 1}.Quantile(alpha / 2)
	}
	if successes < trials {
		iv.High = distuv.Beta{Alpha: k + 1, Beta: n - k}.Quantile(1 - alpha/2)
	}
	return iv
}
