package launchenv

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
)

// env makes a lookup function of "K=V" pairs.
func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for _, p := range kv {
		k, v, _ := strings.Cut(p, "=")
		m[k] = v
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// srunEnv is what srun -n 4 sets for rank r of step 3 of job 4711 (the variables read).
func srunEnv(r string, extra ...string) func(string) (string, bool) {
	return env(append([]string{"SLURM_PROCID=" + r, "SLURM_NTASKS=4", "SLURM_STEP_NUM_TASKS=4", "SLURM_JOB_ID=4711",
		"SLURM_STEP_ID=3", "SLURM_STEP_NODELIST=node[07-08]", "SLURM_JOB_NODELIST=node[01-08]", "SLURMD_NODENAME=node07"}, extra...)...)
}

const hnp = "1262092288.0;tcp://192.0.2.2,10.1.0.5:54253;tcp6://[fd00::2]:41955"

func ompiEnv(r string, extra ...string) func(string) (string, bool) {
	return env(append([]string{"OMPI_COMM_WORLD_RANK=" + r, "OMPI_COMM_WORLD_SIZE=3", "OMPI_MCA_ess_base_jobid=1262092289",
		"OMPI_MCA_orte_hnp_uri=" + hnp, "OMPI_MCA_orte_local_daemon_uri=" + hnp,
		// mpirun inside a SLURM allocation: its daemons' step, which must not count.
		"SLURM_PROCID=0", "SLURM_STEP_ID=0", "SLURM_NTASKS=1", "SLURM_JOB_ID=9", "SLURM_STEP_NODELIST=x"}, extra...)...)
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		name string
		look func(string) (string, bool)
		want Launch
	}{
		{"nothing", env(), Launch{Rank: -1}},
		{"srun", srunEnv("2"), Launch{Launcher: Srun, Rank: 2, Size: 4, Pool: "slurm-4711.3",
			RegistryHosts: []string{"node07"}, RegistryPort: 20000 + 12*711 + 3, nodeName: "node07"}},
		{"srun port override", srunEnv("2", "IBIS_REGISTRY_PORT=9000"), Launch{Launcher: Srun, Rank: 2, Size: 4,
			Pool: "slurm-4711.3", RegistryHosts: []string{"node07"}, RegistryPort: 9000, nodeName: "node07"}},
		{"srun job nodelist", env("SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOBID=12", "SLURM_STEPID=0", "SLURM_JOB_NODELIST=c[3-4]"),
			Launch{Launcher: Srun, Rank: 0, Size: 2, Pool: "slurm-12.0", RegistryHosts: []string{"c3"}, RegistryPort: 20144}},
		{"ibis-run inside srun", srunEnv("2", "IBIS_RANK=5", "IBIS_POOL_SIZE=8"), Launch{Launcher: IbisRun, Rank: 5, Size: 8}},
		{"batch script", env("SLURM_JOB_ID=4711", "SLURM_NTASKS=16", "SLURM_PROCID=0", "SLURM_JOB_NODELIST=n[1-4]"),
			Launch{Rank: -1, Note: "SLURM variables without a step id (a batch script or salloc shell, not srun): ignored"}},
		{"batch step id", env("SLURM_JOB_ID=4711", "SLURM_NTASKS=16", "SLURM_PROCID=0", "SLURM_STEP_ID=4294967294"),
			Launch{Rank: -1, Note: "SLURM step 4294967294 is not an srun step (a batch script or salloc shell): ignored"}},
		{"srun --mpi=pmix", srunEnv("1", "PMIX_RANK=1"), Launch{Launcher: Srun, Rank: 1, Size: 4, Pool: "slurm-4711.3",
			RegistryHosts: []string{"node07"}, RegistryPort: 20000 + 12*711 + 3, nodeName: "node07"}},
		{"pmix alone", env("PMIX_RANK=3"), Launch{Launcher: PMI, Rank: 3}},
		{"batch with pmix", env("SLURM_PROCID=0", "PMI_RANK=2"), Launch{Launcher: PMI, Rank: 2}},
		{"mpirun", ompiEnv("1"), Launch{Launcher: Mpirun, Rank: 1, Size: 3, Pool: "ompi-1262092289",
			RegistryHosts: []string{"192.0.2.2", "10.1.0.5", "fd00::2"}, RegistryPort: Port(1262092289>>16, 1),
			hnpURI: hnp, localDaemonURI: hnp}},
		{"mpirun without job id", env("OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2"), Launch{Launcher: Mpirun, Rank: 0, Size: 2,
			Note: "mpirun without OMPI_MCA_ess_base_jobid: no pool name or registry from it"}},
	} {
		got, err := Detect(c.look)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.Launcher != c.want.Launcher || got.Rank != c.want.Rank || got.Size != c.want.Size || got.Pool != c.want.Pool ||
			!slices.Equal(got.RegistryHosts, c.want.RegistryHosts) || got.RegistryPort != c.want.RegistryPort ||
			got.Note != c.want.Note || got.nodeName != c.want.nodeName || got.hnpURI != c.want.hnpURI {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

func TestDetectErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		look func(string) (string, bool)
		says string
	}{
		{"ntasks not a number", srunEnv("0", "SLURM_STEP_NUM_TASKS=four"), `SLURM_STEP_NUM_TASKS="four"`},
		{"ntasks zero", env("SLURM_PROCID=0", "SLURM_NTASKS=0", "SLURM_STEP_ID=0", "SLURM_JOB_ID=1", "SLURM_JOB_NODELIST=a"), `SLURM_NTASKS="0"`},
		{"no ntasks", env("SLURM_PROCID=0", "SLURM_STEP_ID=0", "SLURM_JOB_ID=1", "SLURM_JOB_NODELIST=a"), "without SLURM_NTASKS"},
		{"procid too big", srunEnv("4"), "SLURM_PROCID=4 is not below"},
		{"procid negative", srunEnv("-1"), `SLURM_PROCID="-1"`},
		{"bad step", srunEnv("0", "SLURM_STEP_ID=x"), `SLURM_STEP_ID="x"`},
		{"bad job", srunEnv("0", "SLURM_JOB_ID=j"), `SLURM_JOB_ID="j"`},
		{"no nodelist", env("SLURM_PROCID=0", "SLURM_NTASKS=1", "SLURM_STEP_ID=0", "SLURM_JOB_ID=1"), "SLURM_STEP_NODELIST"},
		{"bad nodelist", srunEnv("0", "SLURM_STEP_NODELIST=node[1-"), "never closed"},
		{"bad port", srunEnv("0", "IBIS_REGISTRY_PORT=70000"), "IBIS_REGISTRY_PORT"},
		{"bad ibis rank", env("IBIS_RANK=one"), `IBIS_RANK="one"`},
		{"ompi without size", env("OMPI_COMM_WORLD_RANK=0"), "without OMPI_COMM_WORLD_SIZE"},
		{"ompi rank too big", ompiEnv("3"), "not below OMPI_COMM_WORLD_SIZE=3"},
		{"bad hnp", ompiEnv("0", "OMPI_MCA_orte_hnp_uri=12.0;tcp://nohost:1"), "not an IP address"},
		{"bad pmix", env("PMIX_RANK=x"), `PMIX_RANK="x"`},
	} {
		_, err := Detect(c.look)
		if !errors.Is(err, ErrEnvironment) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want ErrEnvironment saying %q", c.name, err, c.says)
		}
	}
}

func TestPortRule(t *testing.T) {
	seen := map[int]bool{}
	for job := uint64(1000); job < 2000; job++ {
		for step := uint64(0); step < 12; step++ {
			p := Port(job, step)
			if p < 20000 || p >= 32768 || seen[p] {
				t.Fatalf("job %d step %d: port %d out of range or taken", job, step, p)
			}
			seen[p] = true
		}
	}
}

func TestServesHere(t *testing.T) {
	ipnet := func(s string) net.Addr { ip, n, _ := net.ParseCIDR(s); n.IP = ip; return n }
	here := Host{Name: "node07.cluster", Addrs: []net.Addr{ipnet("127.0.0.1/8"), ipnet("192.0.2.2/24")},
		Lookup: func(_ context.Context, h string) ([]string, error) {
			if h == "node07" {
				return []string{"192.0.2.2"}, nil
			}
			return []string{"192.0.2.9"}, nil
		}}
	ok := func(name string, look func(string) (string, bool), h Host) {
		t.Helper()
		l, err := Detect(look)
		if err == nil {
			err = l.ServesHere(h)
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	bad := func(name string, look func(string) (string, bool), h Host) {
		t.Helper()
		l, err := Detect(look)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.ServesHere(h); !errors.Is(err, ErrRankZeroElsewhere) || !strings.Contains(err.Error(), "IBIS_REGISTRY") {
			t.Errorf("%s: %v; want ErrRankZeroElsewhere naming IBIS_REGISTRY", name, err)
		}
	}
	ok("srun node name", srunEnv("0"), Host{})
	bad("srun other node", srunEnv("0", "SLURMD_NODENAME=node08"), Host{})
	ok("srun host name", srunEnv("0", "SLURMD_NODENAME="), here)
	ok("srun by address", srunEnv("0", "SLURMD_NODENAME="), Host{Name: "x", Addrs: here.Addrs, Lookup: here.Lookup})
	bad("srun elsewhere", srunEnv("0", "SLURMD_NODENAME="), Host{Name: "node08", Addrs: []net.Addr{ipnet("192.0.2.3/24")}, Lookup: here.Lookup})
	ok("srun localhost", srunEnv("0", "SLURMD_NODENAME=", "SLURM_STEP_NODELIST=localhost"), Host{})
	ok("mpirun", ompiEnv("0"), Host{})
	bad("mpirun remote daemon", ompiEnv("0", "OMPI_MCA_orte_local_daemon_uri=1262092288.1;tcp://192.0.2.7:1"), here)
	ok("mpirun by address", ompiEnv("0", "OMPI_MCA_orte_local_daemon_uri="), here)
	bad("mpirun elsewhere by address", ompiEnv("0", "OMPI_MCA_orte_local_daemon_uri="), Host{Addrs: []net.Addr{ipnet("192.0.2.3/24")}})

	local := []net.Addr{ipnet("127.0.0.1/8"), ipnet("10.1.0.9/16")}
	if got := OrderHosts([]string{"127.0.0.1", "192.0.2.2", "10.1.0.5", "fd00::2"}, local); !slices.Equal(got,
		[]string{"10.1.0.5", "192.0.2.2", "fd00::2", "127.0.0.1"}) {
		t.Errorf("OrderHosts: %q", got)
	}
}
