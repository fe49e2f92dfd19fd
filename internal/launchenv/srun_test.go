package launchenv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/netns"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/internal/vcluster"
)

// slurm is a private single-node SLURM (slurmctld and slurmd) in a network namespace of
// its own, so that its ports and its registry ports meet nobody else's.
type slurm struct {
	ns    string // the namespace's path, for nsenter
	conf  string // slurm.conf
	dir   string
	procs []*exec.Cmd
}

// startSlurm starts the private SLURM, or skips the test saying what is missing.
func startSlurm(t *testing.T, ctx context.Context) *slurm {
	t.Helper()
	for _, p := range []string{"slurmctld", "slurmd", "srun", "sbatch", "sinfo", "nsenter"} {
		if _, err := exec.LookPath(p); err != nil {
			vcluster.SkipOrFail(t, fmt.Sprintf("%s not installed (slurm-wlm, util-linux): %v", p, err))
		}
	}
	nw, err := netns.New(ctx, 1, netns.WithSubnet(77), netns.WithPrefix(fmt.Sprintf("slurmenv-%d", os.Getpid())))
	if errors.Is(err, netns.ErrUnavailable) {
		vcluster.SkipOrFail(t, fmt.Sprint("a private SLURM needs a network namespace: ", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := nw.Close(); err != nil {
			t.Error(err)
		}
	})
	h := nw.Hosts()[0]
	dir := t.TempDir()
	s := &slurm{ns: "/run/netns/" + h.Namespace, conf: filepath.Join(dir, "slurm.conf"), dir: dir}
	for _, d := range []string{"state", "spool"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// auth/none: no munged to run; the namespace keeps everyone else out.
	conf := fmt.Sprintf(`ClusterName=launchenv
SlurmctldHost=localhost(%[2]s)
SlurmUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=%[1]s/state
SlurmdSpoolDir=%[1]s/spool
SlurmctldPidFile=%[1]s/slurmctld.pid
SlurmdPidFile=%[1]s/slurmd.pid
SlurmctldLogFile=%[1]s/slurmctld.log
SlurmdLogFile=%[1]s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=localhost NodeAddr=%[2]s CPUs=%[3]d State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
`, dir, h.Addr, runtime.NumCPU())
	if err := os.WriteFile(s.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// nsenter, not ip netns exec: slurmd needs the real /sys (its cgroup plugin).
	for _, daemon := range [][]string{{"slurmctld", "-D", "-i"}, {"slurmd", "-D", "-N", "localhost"}} {
		args := append([]string{"--net=" + s.ns}, append(daemon, "-f", s.conf)...)
		cmd := exec.Command("nsenter", args...)
		cmd.Env = append(os.Environ(), "SLURM_CONF="+s.conf)
		log, err := os.Create(filepath.Join(dir, daemon[0]+".out"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s.procs = append(s.procs, cmd)
		_ = log.Close()
	}
	t.Cleanup(s.stop)
	// Wait for the node to be idle; slurmctld takes about a second.
	for {
		out, _ := s.command(ctx, "sinfo", "-h", "-o", "%t").CombinedOutput()
		if strings.TrimSpace(string(out)) == "idle" {
			return s
		}
		select {
		case <-ctx.Done():
			logs, _ := os.ReadFile(filepath.Join(dir, "slurmctld.log"))
			t.Fatalf("the private SLURM did not become idle: sinfo says %q\n%s", out, logs)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stop ends the daemons (their process groups: slurmd's step daemons too).
func (s *slurm) stop() {
	for _, c := range s.procs {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
	}
	for _, c := range s.procs {
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
}

// command runs a SLURM client command in the namespace.
func (s *slurm) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + s.ns, name}, args...)...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+s.conf)
	return cmd
}

// A real srun step of tcp or nio processes forms one pool with SLURM's ranks, also with
// --mpi=pmix; a program run directly in a batch script runs alone, and srun in the script
// forms the pool.
func TestRealSrunFormsOnePool(t *testing.T) {
	if os.Geteuid() != 0 {
		vcluster.SkipOrFail(t, "a private SLURM runs as root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s := startSlurm(t, ctx)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		n    int
		args []string
		impl string
	}{
		{"tcp", 4, nil, "tcp"},
		{"nio", 3, nil, "nio"},
		{"tcp-pmix", 3, []string{"--mpi=pmix"}, "tcp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"--net=" + s.ns, "srun", "-O", "-n", strconv.Itoa(c.n)}, c.args...)
			out, err := selfexec.Run(ctx, []string{selfexec.NoTests}, selfexec.WithLauncher("nsenter", args...),
				selfexec.WithoutEnv(launcherPrefixes...), selfexec.WithEnv("SLURM_CONF="+s.conf, envMember+"="+c.impl),
				selfexec.WithCombinedOutput())
			if err != nil {
				t.Fatalf("srun: %v\n%s", err, out.Output())
			}
			checkPool(t, out.Output(), c.n)
		})
	}
	t.Run("sbatch", func(t *testing.T) {
		script := filepath.Join(s.dir, "job.sh")
		output := filepath.Join(s.dir, "job.out")
		body := fmt.Sprintf("#!/bin/sh\n%[1]s=alone %[2]s %[3]s\n%[1]s=tcp srun %[2]s %[3]s\n", envMember, self, selfexec.NoTests)
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := s.command(ctx, "sbatch", "-W", "-O", "-n", "3", "-o", output, script).CombinedOutput(); err != nil {
			job, _ := os.ReadFile(output)
			t.Fatalf("sbatch: %v\n%s\n%s", err, out, job)
		}
		job, err := os.ReadFile(output)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(job), "alone size=0 members=1\n") {
			t.Errorf("the program run directly in the batch script did not run alone:\n%s", job)
		}
		checkPool(t, string(job), 3)
	})
}
