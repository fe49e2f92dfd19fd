package vcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// rshAgent is Open MPI's plm_rsh_agent for the cluster: mpirun calls it as
// `agent [options] HOST COMMAND...` to start its daemon on HOST, and it runs the command in
// HOST's namespace, as ssh would on a real host. Options (ssh's -x and such) are dropped.
const rshAgent = `#!/bin/sh
# Open MPI rsh agent of virtual cluster {{id}}, written by internal/vcluster.
while [ $# -gt 0 ]; do
	case "$1" in -*) shift ;; *) break ;; esac
done
host="$1"; shift
case "$host" in
{{cases}}*) echo "rsh agent of {{id}}: no host $host" >&2; exit 255 ;;
esac
exec nsenter --net="/run/netns/$ns" -- unshare --mount --uts -- sh -c '{{script}}' "$host" "$ns" "{{dir}}" sh -c "$*"
`

// writeMPIFiles writes mpirun's hostfile (one line per host, slots as SLURM's CPUs) and
// the rsh agent into the state directory.
func (c *Cluster) writeMPIFiles() error {
	var hf, cases strings.Builder
	for _, h := range c.st.Hosts {
		fmt.Fprintf(&hf, "%s slots=%d\n", h.Name, c.st.CPUs)
		fmt.Fprintf(&cases, "%s) ns=%s ;;\n", h.Name, h.Namespace)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "hostfile"), []byte(hf.String()), 0o644); err != nil {
		return fmt.Errorf("vcluster: %w", err)
	}
	agent := strings.NewReplacer("{{id}}", c.st.ID, "{{cases}}", cases.String(), "{{script}}", hostScript, "{{dir}}", c.dir).Replace(rshAgent)
	if err := os.WriteFile(filepath.Join(c.dir, "rsh-agent"), []byte(agent), 0o755); err != nil {
		return fmt.Errorf("vcluster: %w", err)
	}
	return nil
}

// MPIRunArgs returns mpirun's arguments (without "mpirun" and the program) that start np
// ranks across the cluster, one per host in turn (--map-by node): the hostfile, the rsh
// agent, and the transports of ranks on different hosts: TCP over eth0, the hosts' cables
// (vader is shared memory, between ranks of one host only; loopback and ucx are not used).
// As root it adds --allow-run-as-root. Run mpirun on h1 (MPIRun does).
func (c *Cluster) MPIRunArgs(np int) []string {
	args := []string{
		"-np", strconv.Itoa(np), "--hostfile", filepath.Join(c.dir, "hostfile"),
		"--map-by", "node", "--oversubscribe",
		"--mca", "plm_rsh_agent", filepath.Join(c.dir, "rsh-agent"),
		"--mca", "plm_rsh_no_tree_spawn", "1",
		"--mca", "pml", "ob1",
		"--mca", "btl", "self,vader,tcp",
		"--mca", "btl_tcp_if_include", "eth0",
		"--mca", "oob_tcp_if_include", "eth0",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	return args
}

// MPIRun returns a command that runs `mpirun MPIRunArgs(np) name args...` on h1.
func (c *Cluster) MPIRun(ctx context.Context, np int, name string, args ...string) *exec.Cmd {
	argv := append(append(c.MPIRunArgs(np), name), args...)
	return c.Command(ctx, "h1", "mpirun", argv...)
}
