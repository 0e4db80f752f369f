//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"
)

// KillOnCancel makes the end of cmd's context kill everything cmd
// started. Killing only the shell would leave its children running and
// holding the output pipe, so cmd gets a process group of its own and the
// whole group is killed.
func KillOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// KillLeftovers kills what a command that has exited left running in its
// process group (a shell's background children), and reports whether
// anything was left. Call it after cmd.Wait, with KillOnCancel set before
// Start.
func KillLeftovers(cmd *exec.Cmd) bool {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) == nil
}
