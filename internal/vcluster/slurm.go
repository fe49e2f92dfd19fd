package vcluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// idleBound bounds the wait for every node to be idle; it takes about a second.
const idleBound = 2 * time.Minute

// slurmConf is the cluster's slurm.conf. Each daemon runs in its host's namespace, so the
// default ports serve every cluster at once. No cgroups: processes are tracked by parent
// (linuxproc) and tasks are not bound; config_overrides lets a host claim more CPUs than
// the machine has. Munge is the cluster's own (AuthInfo names its socket).
const slurmConf = `# slurm.conf of virtual cluster {{id}}, written by internal/vcluster.
ClusterName={{cluster}}
SlurmctldHost=h1({{h1addr}})
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={{dir}}/munge/munge.sock
StateSaveLocation={{dir}}/slurmctld
SlurmdSpoolDir={{dir}}/slurmd/%n
SlurmctldPidFile={{dir}}/slurmctld.pid
SlurmdPidFile={{dir}}/slurmd-%n.pid
SlurmctldLogFile={{dir}}/slurmctld.log
SlurmdLogFile={{dir}}/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
SlurmdTimeout=300
InactiveLimit=0
KillWait=5
TmpFS={{dir}}/tmp
{{nodes}}PartitionName=vc Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`

// SlurmConf returns the path of the cluster's slurm.conf ("" without SLURM).
func (c *Cluster) SlurmConf() string {
	if !c.st.Slurm {
		return ""
	}
	return filepath.Join(c.dir, "slurm.conf")
}

// startSlurm starts munged, slurmctld on h1 and a slurmd per host, and waits until every
// node is idle.
func (c *Cluster) startSlurm(ctx context.Context) error {
	if err := c.startMunge(ctx); err != nil {
		return err
	}
	var nodes strings.Builder
	for _, h := range c.st.Hosts {
		if err := os.MkdirAll(filepath.Join(c.dir, "slurmd", h.Name), 0o755); err != nil {
			return fmt.Errorf("vcluster: %w", err)
		}
		fmt.Fprintf(&nodes, "NodeName=%s NodeHostname=%s NodeAddr=%s CPUs=%d State=UNKNOWN\n", h.Name, h.Name, h.Addr, c.st.CPUs)
	}
	conf := strings.NewReplacer("{{id}}", c.st.ID, "{{cluster}}", strings.ReplaceAll(c.st.ID, "-", ""),
		"{{h1addr}}", c.st.Hosts[0].Addr, "{{dir}}", c.dir, "{{nodes}}", nodes.String()).Replace(slurmConf)
	for _, d := range []string{"slurmctld", "slurmd"} {
		if err := os.MkdirAll(filepath.Join(c.dir, d), 0o755); err != nil {
			return fmt.Errorf("vcluster: %w", err)
		}
	}
	if err := os.WriteFile(c.SlurmConf(), []byte(conf), 0o644); err != nil {
		return fmt.Errorf("vcluster: %w", err)
	}
	env := []string{"SLURM_CONF=" + c.SlurmConf()}
	h1, _ := c.Exec("h1")
	ctld, err := startDaemon("slurmctld", filepath.Join(c.dir, "slurmctld.out"), env,
		append(h1, "slurmctld", "-D", "-i", "-f", c.SlurmConf())...)
	if err != nil {
		return err
	}
	c.addDaemon(ctld)
	for _, h := range c.st.Hosts {
		p, _ := c.Exec(h.Name)
		d, err := startDaemon("slurmd "+h.Name, filepath.Join(c.dir, "slurmd-"+h.Name+".out"), env,
			append(p, "slurmd", "-D", "-N", h.Name, "-f", c.SlurmConf())...)
		if err != nil {
			return err
		}
		c.addDaemon(d)
	}
	return c.waitIdle(ctx)
}

func (c *Cluster) addDaemon(d *daemon) {
	c.mu.Lock()
	c.daemons = append(c.daemons, d)
	c.mu.Unlock()
}

// startMunge starts a munged of the cluster's own, with a fresh key, so that the machine's
// munge (running or not, with or without /etc/munge/munge.key) is left alone.
func (c *Cluster) startMunge(ctx context.Context) error {
	dir := filepath.Join(c.dir, "munge")
	if err := os.Mkdir(dir, 0o711); err != nil {
		return fmt.Errorf("vcluster: %w", err)
	}
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("vcluster: a munge key: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "munge.key"), key, 0o600); err != nil {
		return fmt.Errorf("vcluster: %w", err)
	}
	sock := filepath.Join(dir, "munge.sock")
	d, err := startDaemon("munged", filepath.Join(c.dir, "munged.log"), nil,
		"munged", "--foreground", "--force", "--socket="+sock, "--key-file="+filepath.Join(dir, "munge.key"),
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--seed-file="+filepath.Join(dir, "munged.seed"))
	if err != nil {
		return err
	}
	c.addDaemon(d)
	return poll(ctx, 30*time.Second, "munged's socket "+sock, func() (bool, error) {
		if err := d.exited(); err != nil {
			return false, err
		}
		_, err := os.Stat(sock)
		return err == nil, nil
	})
}

// waitIdle waits until sinfo shows every node idle.
func (c *Cluster) waitIdle(ctx context.Context) error {
	var last string
	err := poll(ctx, idleBound, "every node idle", func() (bool, error) {
		c.mu.Lock()
		ds := append([]*daemon(nil), c.daemons...)
		c.mu.Unlock()
		for _, d := range ds {
			if err := d.exited(); err != nil {
				return false, err
			}
		}
		cmd := c.Slurm(ctx, "h1", "sinfo", "-h", "-N", "-o", "%N %t")
		out, err := cmd.CombinedOutput()
		last = strings.TrimSpace(string(out))
		if err != nil {
			return false, nil // slurmctld not listening yet
		}
		idle := 0
		for _, l := range strings.Split(last, "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[1] == "idle" {
				idle++
			}
		}
		return idle == len(c.st.Hosts), nil
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("%w; sinfo said: %s; slurmctld's log ends:\n%s", err, last, logTail(filepath.Join(c.dir, "slurmctld.log")))
	}
	if err != nil {
		return err
	}
	return nil
}

// Slurm returns a command that runs a SLURM client (srun, sbatch, sinfo, scontrol...) on
// host with the cluster's SLURM_CONF, and without the SLURM_* variables of a job this
// process may itself run in.
func (c *Cluster) Slurm(ctx context.Context, host, name string, args ...string) *exec.Cmd {
	cmd := c.Command(ctx, host, name, args...)
	if cmd.Err == nil && !c.st.Slurm {
		cmd.Err = fmt.Errorf("%w: cluster %s was built without WithSlurm", ErrInvalid, c.st.ID)
	}
	cmd.Env = append(withoutSlurm(os.Environ()), "SLURM_CONF="+c.SlurmConf())
	return cmd
}

// withoutSlurm drops the SLURM_* variables from env: those of a job this process may run in
// would mislead the cluster's daemons and clients.
func withoutSlurm(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SLURM_") {
			out = append(out, kv)
		}
	}
	return out
}

// Srun returns a command that runs srun with args on host (h1 usually).
func (c *Cluster) Srun(ctx context.Context, host string, args ...string) *exec.Cmd {
	return c.Slurm(ctx, host, "srun", args...)
}

// poll calls ready every 100 ms until it reports true or an error, ctx ends or bound
// passes; what names the condition in the error.
func poll(ctx context.Context, bound time.Duration, what string, ready func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		ok, err := ready()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("vcluster: waiting %v for %s: %w", bound, what, ctx.Err())
			}
			return fmt.Errorf("vcluster: waiting for %s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
}
