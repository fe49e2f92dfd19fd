package vcluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// daemon is a long-running process of the cluster (munged, slurmctld, a slurmd), started
// by this process. Its output goes to a log file in the state directory.
type daemon struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process is reaped
	err  error         // Wait's result, set before done is closed
}

// startDaemon starts argv with env added, in a process group of its own (a Ctrl-C meant for
// the command's `up` is handled by up, which then stops it).
func startDaemon(name, logPath string, env []string, argv ...string) (*daemon, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("vcluster: %s log: %w", name, err)
	}
	defer f.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(withoutSlurm(os.Environ()), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("vcluster: starting %s: %w", name, err)
	}
	d := &daemon{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.done)
	}()
	return d, nil
}

// exited reports whether the daemon has ended, with why and the end of its log.
func (d *daemon) exited() error {
	select {
	case <-d.done:
		return fmt.Errorf("vcluster: %s exited: %v; its log ends:\n%s", d.name, d.err, logTail(d.log))
	default:
		return nil
	}
}

// stop ends the daemon: SIGTERM, then SIGKILL after termGrace; it returns once reaped.
func (d *daemon) stop() error {
	select {
	case <-d.done:
		return nil
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
		return nil
	case <-time.After(termGrace):
	}
	_ = d.cmd.Process.Kill()
	<-d.done
	return nil
}

// logTail returns the last lines of a log file, for an error message.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	const keep = 2000
	if len(b) > keep {
		b = b[len(b)-keep:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(bytes.TrimSpace(b))
}
