package redistest

import (
	"os/exec"
	"syscall"
)

// setParentDeath has the kernel kill the server if the test process dies first.
func setParentDeath(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
