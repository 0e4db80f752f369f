//go:build !unix

package procgroup

import "os/exec"

// KillOnCancel keeps exec's default where process groups do not exist:
// the end of cmd's context kills cmd alone, and WaitDelay bounds the wait
// for anything it left behind.
func KillOnCancel(*exec.Cmd) {}

// KillLeftovers does nothing where process groups do not exist.
func KillLeftovers(*exec.Cmd) bool { return false }
