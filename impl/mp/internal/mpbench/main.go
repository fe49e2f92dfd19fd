//go:build mpi

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ibisgo/ibis/impl/mp"
	"github.com/ibisgo/ibis/impl/mp/internal/mpi"
	_ "github.com/ibisgo/ibis/impl/tcp"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

var pingType = ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO)

// mpOpts are the options of the impl/mp instance.
var mpOpts = []ipl.Option{ipl.WithImplementation(mp.Name), ipl.WithPortTypes(pingType)}

// A case is one message size of the table.
type benchCase struct {
	name  string
	size  int
	iters int
}

func main() {
	rounds := flag.Int("rounds", 7, "interleaved rounds; the table shows each figure's median over them")
	lat := flag.Int("lat-iters", 20000, "round trips per round for the empty message")
	bw := flag.Int("bw-iters", 300, "round trips per round for the 1 MiB message")
	spin := flag.String("spin", "", "impl/mp's "+mp.PropSpin+" property (default: the package's)")
	maxSleep := flag.String("maxsleep", "", "impl/mp's "+mp.PropMaxSleep+" property (default: the package's)")
	waitSpin := flag.String("waitspin", "", "impl/mp's "+mp.PropWaitSpin+" property (default: the package's)")
	funneled := flag.Bool("funneled", false, "impl/mp's "+mp.PropFunneled+" property: every MPI call on one goroutine, the design before serialized calls")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of each rank to FILE.rank0, FILE.rank1")
	flag.StringVar(&memProfile, "memprofile", "", "write a profile of every allocation of each rank to FILE.rank0, FILE.rank1")
	flag.BoolVar(&mpOnly, "mp-only", false, "time impl/mp alone (no ratios), for a profile of its path (perf record, -cpuprofile)")
	flag.Parse()
	if *waitSpin != "" {
		mpOpts = append(mpOpts, ipl.WithProperty(mp.PropWaitSpin, *waitSpin))
	}
	if *spin != "" {
		mpOpts = append(mpOpts, ipl.WithProperty(mp.PropSpin, *spin))
	}
	if *maxSleep != "" {
		mpOpts = append(mpOpts, ipl.WithProperty(mp.PropMaxSleep, *maxSleep))
	}
	if *funneled {
		mpOpts = append(mpOpts, ipl.WithProperty(mp.PropFunneled, "true"))
	}
	if err := run(*rounds, []benchCase{{"0 B round trip", 0, *lat}, {"1 MiB bandwidth", 1 << 20, *bw}}); err != nil {
		fmt.Fprintln(os.Stderr, "mpbench:", err)
		os.Exit(1)
	}
}

// pair is one implementation's connection between the two ranks.
type pair struct {
	name string
	ib   ipl.Ibis
	out  ipl.SendPort
	in   ipl.ReceivePort
}

func connect(ctx context.Context, name string, ib ipl.Ibis, peer ipl.IbisIdentifier) (*pair, error) {
	in, err := ib.CreateReceivePort(ctx, pingType, "ping")
	if err != nil {
		return nil, err
	}
	out, err := ib.CreateSendPort(pingType, "ping-out")
	if err != nil {
		return nil, err
	}
	if err := out.Connect(ctx, peer, "ping"); err != nil {
		return nil, fmt.Errorf("%s: connecting: %w", name, err)
	}
	return &pair{name: name, ib: ib, out: out, in: in}, nil
}

// pingPong runs iters round trips of size bytes; the initiator sends first.
func (p *pair) pingPong(ctx context.Context, buf []byte, iters int, initiator bool) (time.Duration, error) {
	send := func() error {
		m, err := p.out.NewMessage(ctx)
		if err != nil {
			return err
		}
		if len(buf) > 0 {
			if err := m.WriteArray(buf); err != nil {
				return err
			}
		}
		_, err = m.Finish()
		return err
	}
	recv := func() error {
		m, err := p.in.Receive(ctx)
		if err != nil {
			return err
		}
		if len(buf) > 0 {
			if err := m.ReadArray(buf); err != nil {
				return err
			}
		}
		_, err = m.Finish()
		return err
	}
	start := time.Now()
	for range iters {
		first, second := send, recv
		if !initiator {
			first, second = recv, send
		}
		if err := first(); err != nil {
			return 0, fmt.Errorf("%s: %w", p.name, err)
		}
		if err := second(); err != nil {
			return 0, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return time.Since(start), nil
}

// sendString and recvString move the tcp registry address from rank 0 to rank 1.
func (p *pair) sendString(ctx context.Context, s string) error {
	m, err := p.out.NewMessage(ctx)
	if err != nil {
		return err
	}
	if err := m.WriteString(s); err != nil {
		return err
	}
	_, err = m.Finish()
	return err
}

func (p *pair) recvString(ctx context.Context) (string, error) {
	m, err := p.in.Receive(ctx)
	if err != nil {
		return "", err
	}
	s, err := m.ReadString()
	if _, ferr := m.Finish(); err == nil {
		err = ferr
	}
	return s, err
}

func peerOf(ib ipl.Ibis) (ipl.IbisIdentifier, error) {
	for _, m := range ib.Registry().Members() {
		if m.ID != ib.Identifier().ID {
			return m, nil
		}
	}
	return ipl.IbisIdentifier{}, errors.New("no peer in the pool")
}

func run(rounds int, cases []benchCase) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	mib, err := ipl.New(ctx, mpOpts...)
	if err != nil {
		return err
	}
	defer mib.Close()
	if err := mib.Registry().WaitUntilPoolClosed(ctx); err != nil {
		return err
	}
	if n := mib.Registry().PoolSize(); n != 2 {
		return fmt.Errorf("start me with mpirun -np 2 (the pool has %d members)", n)
	}
	eng, _ := mpi.Current()
	rank := eng.World().Rank
	initiator := rank == 0
	if cpuProfile != "" {
		stop, err := startProfile(fmt.Sprintf("%s.rank%d", cpuProfile, rank))
		if err != nil {
			return err
		}
		defer stop()
	}
	if memProfile != "" {
		write := startMemProfile(fmt.Sprintf("%s.rank%d", memProfile, rank))
		defer func() {
			if err := write(); err != nil {
				fmt.Fprintln(os.Stderr, "mpbench: writing the allocation profile:", err)
			}
		}()
	}
	mpPeer, err := peerOf(mib)
	if err != nil {
		return err
	}
	mpPair, err := connect(ctx, "mp", mib, mpPeer)
	if err != nil {
		return err
	}

	// impl/tcp between the same two processes, its pool's registry on rank 0.
	var regAddr string
	if initiator {
		srv, err := registry.StartEmbedded("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer srv.Close()
		regAddr = srv.Addr()
		if err := mpPair.sendString(ctx, regAddr); err != nil {
			return err
		}
	} else if regAddr, err = mpPair.recvString(ctx); err != nil {
		return err
	}
	tib, err := ipl.New(ctx, ipl.WithImplementation("tcp"), ipl.WithPortTypes(pingType), ipl.WithRegistry(regAddr),
		ipl.WithPool("mpbench"), ipl.WithPoolSize(2))
	if err != nil {
		return err
	}
	defer tib.Close()
	if err := tib.Registry().WaitUntilPoolClosed(ctx); err != nil {
		return err
	}
	tcpPeer, err := peerOf(tib)
	if err != nil {
		return err
	}
	tcpPair, err := connect(ctx, "tcp", tib, tcpPeer)
	if err != nil {
		return err
	}

	direct := func(size, iters int) (time.Duration, error) {
		type res struct {
			d   time.Duration
			err error
		}
		ch := make(chan res, 1)
		if !eng.Do(func(l *mpi.Loop) {
			d, err := l.BenchPingPong(1-rank, size, iters, initiator)
			ch <- res{d, err}
		}) {
			return 0, errors.New("the MPI engine stopped")
		}
		r := <-ch
		return r.d, r.err
	}

	load0 := loadAvg()
	// figures[case][impl] holds one value per round: µs per round trip, or MB/s.
	impls := []string{"direct MPI", "impl/mp", "impl/tcp"}
	figures := make([][][]float64, len(cases))
	for ci := range cases {
		figures[ci] = make([][]float64, len(impls))
	}
	var allocs []float64        // heap allocations of this process per empty impl/mp round trip
	for r := range rounds + 1 { // round 0 warms up
		for ci, c := range cases {
			buf := make([]byte, c.size)
			for ii := range impls {
				if mpOnly && ii != 1 {
					continue
				}
				var d time.Duration
				switch ii {
				case 0:
					d, err = direct(c.size, c.iters)
				case 1:
					before := mallocs()
					d, err = mpPair.pingPong(ctx, buf, c.iters, initiator)
					if c.size == 0 && r > 0 {
						allocs = append(allocs, float64(mallocs()-before)/float64(c.iters))
					}
				case 2:
					d, err = tcpPair.pingPong(ctx, buf, c.iters, initiator)
				}
				if err != nil {
					return err
				}
				if r == 0 {
					continue
				}
				rtt := d.Seconds() / float64(c.iters)
				v := rtt * 1e6
				if c.size > 0 {
					v = float64(c.size) / (rtt / 2) / 1e6 // one-way MB/s
				}
				figures[ci][ii] = append(figures[ci][ii], v)
			}
		}
	}
	version := make(chan string, 1)
	eng.Do(func(l *mpi.Loop) {
		l.BenchFree()
		version <- l.LibraryVersion()
	})
	if initiator {
		mode := "serialized"
		if !eng.Serialized() {
			mode = "funneled"
		}
		fmt.Printf("%s; impl/mp %s; load average at start and end: %s / %s\n", strings.TrimSuffix(strings.Join(strings.Fields(<-version)[:3], " "), ","), mode, load0, loadAvg())
		report(cases, impls, figures, rounds)
		fmt.Printf("\nimpl/mp: %.1f heap allocations per empty round trip on rank 0 (median of the rounds)\n", median(allocs))
	}
	_ = mpPair.out.Close()
	_ = tcpPair.out.Close()
	return nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// report prints, per case and implementation, the median and the best of the rounds
// (the machine may be shared: the best round is the least disturbed), and the ratios
// of impl/mp and impl/tcp to direct MPI for both, all from this one run.
func report(cases []benchCase, impls []string, figures [][][]float64, rounds int) {
	fmt.Printf("%d rounds of %d (empty) and %d (1 MiB) round trips; per implementation the median round, the best and the worst\n\n",
		rounds, cases[0].iters, cases[1].iters)
	fmt.Printf("| case | %s | mp / direct | tcp / direct |\n", strings.Join(impls, " | "))
	fmt.Printf("|---|%s---:|---:|\n", strings.Repeat("---:|", len(impls)))
	for ci, c := range cases {
		unit, best, worst := "µs", slices.Min[[]float64], slices.Max[[]float64]
		if c.size > 0 {
			unit, best, worst = "MB/s", slices.Max[[]float64], slices.Min[[]float64]
		}
		var cells []string
		meds := make([]float64, len(impls))
		bests := make([]float64, len(impls))
		for ii := range impls {
			v := figures[ci][ii]
			if len(v) == 0 {
				meds[ii], bests[ii] = math.NaN(), math.NaN()
				cells = append(cells, "not run")
				continue
			}
			meds[ii], bests[ii] = median(v), best(v)
			cells = append(cells, fmt.Sprintf("%.1f %s (best %.1f, worst %.1f)", meds[ii], unit, bests[ii], worst(v)))
		}
		fmt.Printf("| %s | %s | %.2fx (best %.2fx) | %.2fx (best %.2fx) |\n", c.name, strings.Join(cells, " | "),
			meds[1]/meds[0], bests[1]/bests[0], meds[2]/meds[0], bests[2]/bests[0])
	}
}

// mallocs is the process's count of heap allocations so far.
func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// loadAvg is the machine's load average over 1, 5 and 15 minutes, for the record.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
