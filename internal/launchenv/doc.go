// Package launchenv reads what a process's launcher tells it through the environment:
// cmd/ibis-run's and -np's IBIS_RANK, SLURM's srun (SLURM_PROCID, SLURM_NTASKS, the job
// and step ids, the step's node list), Open MPI's mpirun (OMPI_COMM_WORLD_RANK and _SIZE,
// the job id, the address of mpirun itself) and a bare PMI/PMIx rank. From it ipl makes
// one pool of the launched processes with no IBIS_* setting: the rank, the closed-world
// size, a pool name and where rank 0 serves the pool's registry (docs/CLUSTERS.md).
//
// The rules, in order (the first that applies wins):
//
//  1. IBIS_RANK set: the process was started by ibis-run or an application's -np, which
//     also set the IBIS_* pool settings; SLURM's and Open MPI's variables it inherited
//     are ignored.
//  2. OMPI_COMM_WORLD_RANK set: mpirun (also when mpirun runs inside a SLURM job, whose
//     variables then describe mpirun's daemons, not the ranks).
//  3. SLURM_PROCID and a step id (SLURM_STEP_ID) of a real step: srun. A batch script,
//     salloc's shell or the extern step has job variables but no srun step of its own
//     (no step id, or one of SLURM's special ids): its SLURM variables are ignored and
//     the program runs alone, as it would outside SLURM.
//  4. PMIX_RANK or PMI_RANK: a rank only (for mpj's rank order), no pool.
//
// The registry's port is 20000 + 12*(job mod 1000) + (step mod 12), in 20000..31999:
// below Linux's default ephemeral range (32768-60999), so a kernel-picked port rarely
// holds it, and distinct for 12 steps of 1000 consecutive jobs. IBIS_REGISTRY_PORT
// overrides it.
package launchenv
