// Package procgroup makes the end of a command's context kill the whole
// process group the command started, not the command alone: a shell's
// children would otherwise live on and hold its output pipes. The heal
// command and the kubelet's exec probe both run commands this way.
package procgroup
