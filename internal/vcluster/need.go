package vcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Need names a part of the virtual cluster that a caller needs besides the network.
type Need int

const (
	// NeedTC is a rate limit per link (WithRate): the tc command.
	NeedTC Need = iota + 1
	// NeedSlurm is SLURM (WithSlurm): slurm-wlm, its pmix plugin and munge.
	NeedSlurm
	// NeedMPIRun is Open MPI's mpirun across the hosts.
	NeedMPIRun
	// NeedTUN is a grid's link emulator (WithSites): /dev/net/tun.
	NeedTUN
	// NeedIPTables is a firewalled or NATed site (WithFirewall, WithNAT): iptables.
	NeedIPTables
)

// pmixPlugins are where srun's mpi/pmix plugin lies: Debian's slurm-wlm-basic-plugins,
// or a build from source.
var pmixPlugins = []string{"/usr/lib/*/slurm-wlm/mpi_pmix.so", "/usr/lib*/slurm/mpi_pmix.so", "/usr/local/lib/slurm/mpi_pmix.so"}

func havePMIx() bool {
	for _, p := range pmixPlugins {
		if m, _ := filepath.Glob(p); len(m) > 0 {
			return true
		}
	}
	return false
}

// Unavailable returns nil where a cluster with what needs name can be built here, or an
// error matching ErrUnavailable that says what is missing (for t.Skip).
func Unavailable(needs ...Need) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: not root (network namespaces need root)", ErrUnavailable)
	}
	cmds := []string{"ip", "nsenter", "unshare", "mount"}
	for _, n := range needs {
		switch n {
		case NeedTC:
			cmds = append(cmds, "tc")
		case NeedSlurm:
			cmds = append(cmds, "slurmctld", "slurmd", "srun", "sinfo", "munged")
		case NeedMPIRun:
			cmds = append(cmds, "mpirun")
		case NeedTUN: // a device, checked below
		case NeedIPTables:
			cmds = append(cmds, "iptables")
		default:
			return fmt.Errorf("%w: need %d", ErrInvalid, n)
		}
	}
	for _, c := range cmds {
		if _, err := exec.LookPath(c); err != nil {
			return fmt.Errorf("%w: no %s command (Debian: apt-get install %s)", ErrUnavailable, c, debianPackage(c))
		}
	}
	for _, n := range needs {
		if n == NeedSlurm && !havePMIx() {
			return fmt.Errorf("%w: no mpi_pmix.so for srun --mpi=pmix (Debian: apt-get install slurm-wlm-basic-plugins)", ErrUnavailable)
		}
		if n == NeedTUN {
			if _, err := os.Stat("/dev/net/tun"); err != nil {
				return fmt.Errorf("%w: no TUN device for the link emulator: %w", ErrUnavailable, err)
			}
		}
	}
	return nil
}

func debianPackage(cmd string) string {
	switch cmd {
	case "ip", "tc":
		return "iproute2"
	case "nsenter", "unshare", "mount":
		return "util-linux"
	case "slurmctld", "slurmd", "srun", "sinfo":
		return "slurm-wlm"
	case "munged":
		return "munge"
	case "mpirun":
		return "openmpi-bin"
	}
	return cmd
}
