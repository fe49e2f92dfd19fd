package launchenv

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrEnvironment is matched by every error about a launcher's variables.
var ErrEnvironment = errors.New("launchenv: bad launch environment")

// Launchers, as Launch.Launcher names them.
const (
	IbisRun = "ibis-run" // cmd/ibis-run or an application's -np (IBIS_RANK)
	Srun    = "srun"     // a SLURM job step
	Mpirun  = "mpirun"   // Open MPI's mpirun
	PMI     = "pmi"      // a PMI or PMIx launcher that gives a rank only
)

// Variables read, besides the launchers' own.
const (
	// EnvRank is the launch index that ibis-run and -np set.
	EnvRank = "IBIS_RANK"
	// EnvRegistryPort overrides the port derived from the job (srun, mpirun).
	EnvRegistryPort = "IBIS_REGISTRY_PORT"
)

// Port range of the derived registry port (see the package documentation).
const (
	PortBase  = 20000
	portJobs  = 1000
	portSteps = 12
)

// SLURM's step ids of steps that srun did not start (slurm.h): the batch script, the
// extern step, salloc's interactive step and pending steps are all at or above this.
const slurmSpecialStepIDs = 0xfffffff0

// Launch is what the environment says about this process's launch. Launcher "" means
// none that forms a pool (Note may say why one was ignored).
type Launch struct {
	Launcher string
	// Rank is this process's rank (-1: unknown); Size the number of processes launched
	// together (0: unknown).
	Rank, Size int
	// Pool is a name shared by the processes of this launch and no other
	// ("slurm-JOB.STEP", "ompi-JOBID").
	Pool string
	// RegistryHosts are where rank 0 serves the pool's registry, the most likely
	// first; RegistryPort its port. Empty when the launcher does not say.
	RegistryHosts []string
	RegistryPort  int
	// Note says why launcher variables that were present were ignored.
	Note string

	// nodeName (srun: SLURMD_NODENAME) and the mpirun daemons' URIs, for ServesHere.
	nodeName               string
	hnpURI, localDaemonURI string
}

// Detect reads the launch from the environment (look is os.LookupEnv in production).
// It fails, saying which variable is wrong, when a launcher's variables are malformed or
// contradict each other; it never blocks.
func Detect(look func(string) (string, bool)) (Launch, error) {
	get := func(keys ...string) (string, string) {
		for _, k := range keys {
			if v, ok := look(k); ok && strings.TrimSpace(v) != "" {
				return strings.TrimSpace(v), k
			}
		}
		return "", keys[0]
	}
	if v, k := get(EnvRank); v != "" {
		r, err := nonNegative(v, k)
		if err != nil {
			return Launch{}, err
		}
		size := 0
		if s, k := get("IBIS_POOL_SIZE"); s != "" {
			if size, err = nonNegative(s, k); err != nil {
				return Launch{}, err
			}
		}
		return Launch{Launcher: IbisRun, Rank: r, Size: size}, nil
	}
	if v, _ := get("OMPI_COMM_WORLD_RANK"); v != "" {
		return detectMpirun(get)
	}
	if v, _ := get("SLURM_PROCID"); v != "" {
		l, err := detectSrun(get)
		if err != nil || l.Launcher != "" {
			return l, err
		}
		if r, _ := get("PMIX_RANK", "PMI_RANK"); r == "" {
			return l, nil
		}
	}
	if v, k := get("PMIX_RANK", "PMI_RANK"); v != "" {
		r, err := nonNegative(v, k)
		if err != nil {
			return Launch{}, err
		}
		return Launch{Launcher: PMI, Rank: r}, nil
	}
	return Launch{Rank: -1}, nil
}

func detectSrun(get func(...string) (string, string)) (Launch, error) {
	stepS, stepK := get("SLURM_STEP_ID", "SLURM_STEPID")
	if stepS == "" {
		return Launch{Rank: -1, Note: "SLURM variables without a step id (a batch script or salloc shell, not srun): ignored"}, nil
	}
	step, err := strconv.ParseUint(stepS, 10, 32)
	if err != nil {
		return Launch{}, fmt.Errorf("%w: %s=%q: want a step number", ErrEnvironment, stepK, stepS)
	}
	if step >= slurmSpecialStepIDs {
		return Launch{Rank: -1, Note: fmt.Sprintf("SLURM step %d is not an srun step (a batch script or salloc shell): ignored", step)}, nil
	}
	rank, err := nonNegative(get("SLURM_PROCID"))
	if err != nil {
		return Launch{}, err
	}
	sizeS, sizeK := get("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS")
	if sizeS == "" {
		return Launch{}, fmt.Errorf("%w: srun step without SLURM_NTASKS", ErrEnvironment)
	}
	size, err := positive(sizeS, sizeK)
	if err != nil {
		return Launch{}, err
	}
	if rank >= size {
		return Launch{}, fmt.Errorf("%w: SLURM_PROCID=%d is not below %s=%d", ErrEnvironment, rank, sizeK, size)
	}
	jobS, jobK := get("SLURM_JOB_ID", "SLURM_JOBID")
	if jobS == "" {
		return Launch{}, fmt.Errorf("%w: srun step without SLURM_JOB_ID", ErrEnvironment)
	}
	job, err := strconv.ParseUint(jobS, 10, 64)
	if err != nil {
		return Launch{}, fmt.Errorf("%w: %s=%q: want a job number", ErrEnvironment, jobK, jobS)
	}
	listS, listK := get("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST")
	if listS == "" {
		return Launch{}, fmt.Errorf("%w: srun step without SLURM_STEP_NODELIST or SLURM_JOB_NODELIST", ErrEnvironment)
	}
	hl, err := ParseHostlist(listS)
	if err != nil {
		return Launch{}, fmt.Errorf("%w: %s: %w", ErrEnvironment, listK, err)
	}
	port, err := registryPort(get, job, step)
	if err != nil {
		return Launch{}, err
	}
	node, _ := get("SLURMD_NODENAME")
	return Launch{
		Launcher: Srun, Rank: rank, Size: size,
		Pool:          fmt.Sprintf("slurm-%d.%d", job, step),
		RegistryHosts: []string{hl.First()}, RegistryPort: port,
		nodeName: node,
	}, nil
}

func detectMpirun(get func(...string) (string, string)) (Launch, error) {
	rank, err := nonNegative(get("OMPI_COMM_WORLD_RANK"))
	if err != nil {
		return Launch{}, err
	}
	sizeS, sizeK := get("OMPI_COMM_WORLD_SIZE")
	if sizeS == "" {
		return Launch{}, fmt.Errorf("%w: OMPI_COMM_WORLD_RANK without OMPI_COMM_WORLD_SIZE", ErrEnvironment)
	}
	size, err := positive(sizeS, sizeK)
	if err != nil {
		return Launch{}, err
	}
	if rank >= size {
		return Launch{}, fmt.Errorf("%w: OMPI_COMM_WORLD_RANK=%d is not below OMPI_COMM_WORLD_SIZE=%d", ErrEnvironment, rank, size)
	}
	l := Launch{Launcher: Mpirun, Rank: rank, Size: size}
	jobS, jobK := get("OMPI_MCA_ess_base_jobid")
	if jobS == "" {
		// Not Open MPI 4's mpirun (Open MPI 5's prterun names things differently): a rank
		// and size, but no pool name and no registry; IBIS_POOL and IBIS_REGISTRY must say.
		l.Note = "mpirun without OMPI_MCA_ess_base_jobid: no pool name or registry from it"
		return l, nil
	}
	job, err := strconv.ParseUint(jobS, 10, 32)
	if err != nil {
		return Launch{}, fmt.Errorf("%w: %s=%q: want a job number", ErrEnvironment, jobK, jobS)
	}
	l.Pool = fmt.Sprintf("ompi-%d", job)
	// An Open MPI job id is the job family (16 bits, mpirun's) and the job's number in it.
	if l.RegistryPort, err = registryPort(get, job>>16, job&0xffff); err != nil {
		return Launch{}, err
	}
	hnp, hnpK := get("OMPI_MCA_orte_hnp_uri")
	if hnp == "" {
		l.Note = "mpirun without OMPI_MCA_orte_hnp_uri: no registry host from it"
		return l, nil
	}
	if l.RegistryHosts, err = parseHNPURI(hnp); err != nil {
		return Launch{}, fmt.Errorf("%w: %s: %w", ErrEnvironment, hnpK, err)
	}
	l.hnpURI = hnp
	l.localDaemonURI, _ = get("OMPI_MCA_orte_local_daemon_uri")
	return l, nil
}

// Port returns the registry port of job and step: PortBase + 12*(job mod 1000) +
// (step mod 12).
func Port(job, step uint64) int {
	return PortBase + portSteps*int(job%portJobs) + int(step%portSteps)
}

func registryPort(get func(...string) (string, string), job, step uint64) (int, error) {
	if v, k := get(EnvRegistryPort); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 || p > 65535 {
			return 0, fmt.Errorf("%w: %s=%q: want a port number 1-65535", ErrEnvironment, k, v)
		}
		return p, nil
	}
	return Port(job, step), nil
}

func nonNegative(v, k string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %s=%q: want a non-negative integer", ErrEnvironment, k, v)
	}
	return n, nil
}

func positive(v, k string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%w: %s=%q: want a positive integer", ErrEnvironment, k, v)
	}
	return n, nil
}

// ErrRankZeroElsewhere is matched by ServesHere's error: rank 0 runs on another host
// than the one the other ranks look for the registry on.
var ErrRankZeroElsewhere = errors.New("launchenv: rank 0 does not run where the others look for the registry")
