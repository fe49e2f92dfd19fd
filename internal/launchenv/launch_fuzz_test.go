package launchenv

import (
	"errors"
	"testing"
)

// FuzzDetect feeds arbitrary values to the variables Detect parses: it must give a
// launch or an error matching ErrEnvironment, never panic.
func FuzzDetect(f *testing.F) {
	f.Add("0", "4", "4711", "3", "node[07-08]", hnp, "1262092289")
	f.Add("x", "0", "", "4294967294", "n[", "12.0;tcp://a:1", "-1")
	f.Fuzz(func(t *testing.T, rank, size, job, step, nodes, uri, jobid string) {
		srun := env("SLURM_PROCID="+rank, "SLURM_NTASKS="+size, "SLURM_JOB_ID="+job, "SLURM_STEP_ID="+step, "SLURM_STEP_NODELIST="+nodes)
		ompi := env("OMPI_COMM_WORLD_RANK="+rank, "OMPI_COMM_WORLD_SIZE="+size, "OMPI_MCA_ess_base_jobid="+jobid, "OMPI_MCA_orte_hnp_uri="+uri)
		for _, look := range []func(string) (string, bool){srun, ompi} {
			l, err := Detect(look)
			if err != nil {
				if !errors.Is(err, ErrEnvironment) {
					t.Fatalf("error %v does not match ErrEnvironment", err)
				}
				continue
			}
			if l.Launcher == Srun || l.Launcher == Mpirun {
				if l.Rank < 0 || l.Rank >= l.Size {
					t.Fatalf("rank %d of %d", l.Rank, l.Size)
				}
				if l.Launcher == Srun && (len(l.RegistryHosts) != 1 || l.RegistryHosts[0] == "") {
					t.Fatalf("srun launch without a registry host: %+v", l)
				}
			}
		}
	})
}
