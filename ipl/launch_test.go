package ipl

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func lookup(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for _, p := range kv {
		k, v, _ := strings.Cut(p, "=")
		m[k] = v
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func srunVars(rank string, extra ...string) func(string) (string, bool) {
	return lookup(append([]string{"SLURM_PROCID=" + rank, "SLURM_NTASKS=4", "SLURM_JOB_ID=4711", "SLURM_STEP_ID=3",
		"SLURM_STEP_NODELIST=localhost,node2", "SLURMD_NODENAME=localhost"}, extra...)...)
}

// Under srun, every rank joins the registry on the step's first node at the derived
// port, rank 0 serves it, and the size and pool come from the step.
func TestApplyEnvironmentSrun(t *testing.T) {
	for _, rank := range []string{"0", "1"} {
		var c Config
		if err := c.ApplyEnvironment(srunVars(rank)); err != nil {
			t.Fatal(err)
		}
		serve := ""
		if rank == "0" {
			serve = ":28535"
		}
		if c.Registry != "localhost:28535" || c.Pool != "slurm-4711.3" || c.PoolSize != 4 || c.ServeRegistry != serve ||
			c.RegistryDialTimeout >= 0 {
			t.Errorf("rank %s: %+v", rank, c)
		}
	}
}

// IBIS_* variables and options win over srun's; IBIS_REGISTRY means nobody serves.
func TestApplyEnvironmentIbisWins(t *testing.T) {
	var c Config
	if err := c.ApplyEnvironment(srunVars("0", "IBIS_REGISTRY=reg:8888", "IBIS_POOL=mine")); err != nil {
		t.Fatal(err)
	}
	if c.Registry != "reg:8888" || c.Pool != "mine" || c.PoolSize != 4 || c.ServeRegistry != "" || c.RegistryDialTimeout != 0 {
		t.Errorf("IBIS_REGISTRY under srun: %+v", c)
	}
	c = Config{}
	WithPoolSize(2)(&c)
	WithRegistryDialTimeout(time.Second)(&c)
	if err := c.ApplyEnvironment(srunVars("1")); err != nil || c.PoolSize != 2 || c.RegistryDialTimeout != time.Second {
		t.Errorf("options under srun: %+v, %v", c, err)
	}
	// ibis-run inside an srun step or an sbatch script: its IBIS_RANK wins.
	c = Config{}
	if err := c.ApplyEnvironment(srunVars("2", "IBIS_RANK=0", "IBIS_REGISTRY=127.0.0.1:1", "IBIS_POOL_SIZE=2")); err != nil ||
		c.PoolSize != 2 || c.ServeRegistry != "" || c.Pool != "" {
		t.Errorf("ibis-run inside srun: %+v, %v", c, err)
	}
}

// A program run directly in a batch script (job variables, no step) runs alone.
func TestApplyEnvironmentBatchScript(t *testing.T) {
	var c Config
	err := c.ApplyEnvironment(lookup("SLURM_JOB_ID=4711", "SLURM_NTASKS=16", "SLURM_PROCID=0", "SLURM_JOB_NODELIST=n[1-4]"))
	if err != nil || c.Registry != "" || c.PoolSize != 0 || c.ServeRegistry != "" {
		t.Errorf("batch script: %+v, %v", c, err)
	}
}

// mp makes its pool from the MPI job: srun's variables change nothing, also when mp
// is picked after the environment was read.
func TestApplyEnvironmentLeavesMPAlone(t *testing.T) {
	var c Config
	if err := c.ApplyEnvironment(srunVars("0", "IBIS_IMPL=mp")); err != nil || c.Registry != "" || c.PoolSize != 0 || c.Pool != "" {
		t.Errorf("srun with IBIS_IMPL=mp: %+v, %v", c, err)
	}
	c = Config{}
	if err := c.ApplyEnvironment(srunVars("0")); err != nil {
		t.Fatal(err)
	}
	c.undoLaunch()
	if c.Registry != "" || c.PoolSize != 0 || c.Pool != "" || c.ServeRegistry != "" || c.RegistryDialTimeout != 0 {
		t.Errorf("after undoLaunch: %+v", c)
	}
}

func TestApplyEnvironmentLaunchErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		look func(string) (string, bool)
		says string
	}{
		{"rank 0 elsewhere", srunVars("0", "SLURMD_NODENAME=node2"), "SLURMD_NODENAME"},
		{"bad hostlist", srunVars("1", "SLURM_STEP_NODELIST=n[1-"), "never closed"},
		{"ntasks", srunVars("1", "SLURM_NTASKS=many"), `SLURM_NTASKS="many"`},
		{"mpirun without hnp", lookup("OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2", "OMPI_MCA_ess_base_jobid=65537"), "IBIS_REGISTRY"},
	} {
		var cfg Config
		err := cfg.ApplyEnvironment(c.look)
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want ErrInvalidArgument saying %q", c.name, err, c.says)
		}
	}
}
