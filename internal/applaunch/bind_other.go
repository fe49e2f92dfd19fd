//go:build !linux

package applaunch

import "os/exec"

// allowedCPUs is unknown off Linux: processes are not bound.
func allowedCPUs() []int { return nil }

// startOn starts cmd unbound: binding is Linux-only.
func startOn(cmd *exec.Cmd, _ int) error { return cmd.Start() }
