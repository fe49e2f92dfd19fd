package vcluster

import (
	"context"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
)

// TestSlurmAndMPIRun builds 4 hosts with SLURM and runs srun and mpirun across them.
func TestSlurmAndMPIRun(t *testing.T) {
	need(t, NeedSlurm, NeedMPIRun)
	c := up(t, WithHosts(4), WithSlurm(), WithSubnet(12))
	ctx, cancel := context.WithTimeout(context.Background(), testBound)
	defer cancel()
	addrs := map[string]string{}
	for _, h := range c.Hosts() {
		addrs[h.Name] = h.Addr
	}
	show := `echo "$SLURM_PROCID $SLURMD_NODENAME $(cat /proc/sys/kernel/hostname) $(ip -4 -o addr show eth0 | awk '{print $4}')"`

	t.Run("one task per host", func(t *testing.T) {
		lines := run(t, c.Srun(ctx, "h1", "-N", "3", "-n", "3", "sh", "-c", show))
		nodes := map[string]bool{}
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) != 4 || f[1] != f[2] || f[3] != addrs[f[1]]+"/24" {
				t.Fatalf("task line %q: want RANK NODE HOSTNAME ADDR of one host", l)
			}
			nodes[f[1]] = true
		}
		if len(lines) != 3 || len(nodes) != 3 {
			t.Fatalf("3 tasks on 3 hosts, got:\n%s", strings.Join(lines, "\n"))
		}
	})
	t.Run("16 tasks on 4 hosts", func(t *testing.T) {
		lines := run(t, c.Srun(ctx, "h1", "-n", "16", "sh", "-c", show))
		perNode := map[string]int{}
		for _, l := range lines {
			if f := strings.Fields(l); len(f) == 4 {
				perNode[f[1]]++
			}
		}
		if len(lines) != 16 || len(perNode) > 4 {
			t.Fatalf("16 tasks on at most 4 hosts, got %v:\n%s", perNode, strings.Join(lines, "\n"))
		}
	})
	t.Run("pmix", func(t *testing.T) {
		lines := run(t, c.Srun(ctx, "h1", "--mpi=pmix", "-N", "2", "-n", "2", "sh", "-c", `echo "$PMIX_RANK"`))
		sort.Strings(lines)
		if strings.Join(lines, " ") != "0 1" {
			t.Fatalf("PMIX_RANK of 2 tasks: %q", lines)
		}
	})
	t.Run("mpirun one rank per host", func(t *testing.T) {
		lines := run(t, c.MPIRun(ctx, 4, "sh", "-c", `echo "$OMPI_COMM_WORLD_RANK $(cat /proc/sys/kernel/hostname)"`))
		sort.Strings(lines)
		if got := strings.Join(lines, ","); got != "0 h1,1 h2,2 h3,3 h4" {
			t.Fatalf("ranks and hosts: %q", got)
		}
	})
	// A task left running is stopped by Close, with the daemons.
	sleeper := c.Srun(ctx, "h1", "-N", "2", "-n", "2", "sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- sleeper.Wait() }()
	if err := poll(ctx, time.Minute, "the sleeping job", func() (bool, error) {
		out, err := c.Slurm(ctx, "h1", "squeue", "-h", "-t", "R").Output()
		return err == nil && strings.TrimSpace(string(out)) != "", nil
	}); err != nil {
		t.Fatal(err)
	}
	closeLeavesNothing(t, c)
	<-waitErr
}

// run runs cmd and returns its output's lines, failing the test on error.
func run(t *testing.T, cmd *exec.Cmd) []string {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%q: %v\n%s%s", cmd.Args, err, out, stderr)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestSweep kills the owner of a cluster with SLURM with SIGKILL: the next Sweep removes its
// namespaces, daemons and files.
func TestSweep(t *testing.T) {
	need(t, NeedSlurm)
	ctx, cancel := context.WithTimeout(context.Background(), testBound)
	defer cancel()
	child, err := selfexec.Start(ctx, nil, selfexec.WithEnv(envRole+"=up"), selfexec.WithStdoutPipe())
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	var id string
	buf := make([]byte, 64)
	n, err := child.StdoutPipe().Read(buf)
	if err != nil || !strings.HasPrefix(string(buf[:n]), "ivc-") {
		t.Fatalf("child's cluster id: %q, %v\n%s", buf[:n], err, child.Output())
	}
	id = strings.TrimSpace(string(buf[:n]))
	if len(namespaces(id+"-")) != 3 {
		t.Fatalf("child's cluster %s has namespaces %v", id, namespaces(id+"-"))
	}
	if err := child.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if !stale(id) {
		t.Fatalf("cluster %s of a killed owner is not stale", id)
	}
	if err := Sweep(ctx, nil); err != nil {
		t.Fatal(err)
	}
	leftovers(t, id)
}
