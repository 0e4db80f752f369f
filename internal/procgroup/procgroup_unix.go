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
