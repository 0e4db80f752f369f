// Package matrix runs scenarios many times and states the comparison as
// rates: [Run] runs each condition (a scenarios.Spec) Repeat times, each pass
// with the next seed, one run at a time, and [Report] gathers per
// configuration the false restarts and heals per hour of working link and
// the share of outages detected, with their 95% intervals ([PoissonRate],
// [ClopperPearson]), and marks a run saturated when the machine's CPU was
// ([SaturatedCPU]). It writes matrix.md, matrix.json and matrix.png, and
// each run's own report beside them.
//
// The built-in conditions are scenarios.MatrixConditions; a single run is
// package scenarios' Run. Run owns every run it starts and returns when the
// run under way ends after its context was cancelled.
package matrix
