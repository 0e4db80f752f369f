// Package probeflags is the command line of tunnelprobe probe: its flags,
// the kubelet's and Docker's, which become a prober.KubeletConfig or a
// prober.DockerConfig, and the rules that refuse combinations making no
// sense. Each flag is also read from TUNNELPROBE_PROBE_<FLAG> (package
// cliflag); errors name the flags.
package probeflags
