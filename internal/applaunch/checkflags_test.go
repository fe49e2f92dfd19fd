package applaunch

import (
	"strings"
	"testing"
)

// -np in a process that mpirun, srun or ibis-run started with others is refused: each
// would start a pool of its own (mpirun -np 2 ./sor -np 2 ran two computations).
func TestNpUnderALaunchRefused(t *testing.T) {
	for _, v := range []string{"IBIS_RANK", "IBIS_POOL_SIZE", "SLURM_STEP_ID", "SLURM_PROCID", "PMIX_RANK", "PMI_RANK"} {
		t.Setenv(v, "") // whatever launched the test
	}
	if err := CheckFlags("sor", nil, ""); err != nil {
		t.Fatalf("-np alone: %v", err)
	}
	t.Setenv("OMPI_COMM_WORLD_RANK", "0")
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	if err := CheckFlags("sor", nil, ""); err == nil || !strings.Contains(err.Error(), "launch of 2 processes") {
		t.Errorf("-np under mpirun -np 2: %v, want it refused", err)
	}
}
