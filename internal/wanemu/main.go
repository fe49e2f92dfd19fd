package wanemu

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"go.uber.org/zap"
)

// Main is the emulator program (cmd/ibis-wanemu, and the virtual cluster's own copy):
// `-config FILE` names its Config. It runs until SIGTERM or SIGINT, or until the TUN device
// fails (its namespace went), and logs its counters then, and on SIGUSR1. It returns the
// exit code.
func Main(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("ibis-wanemu", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "the emulator's configuration (JSON, see wanemu.Config)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: ibis-wanemu -config FILE")
		return 2
	}
	log := zap.New(zapCore(stderr))
	defer func() { _ = log.Sync() }()
	if err := run(*path, log); err != nil {
		log.Error("wanemu: stopped", zap.Error(err))
		return 1
	}
	return 0
}

func run(path string, log *zap.Logger) error {
	cfg, err := LoadConfig(path)
	if err != nil {
		return err
	}
	e, err := New(cfg, log)
	if err != nil {
		return err
	}
	dev, err := OpenTUN(cfg.Device)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var serveErr error
	if cfg.Control != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if serveErr = e.Serve(ctx, cfg.Control); serveErr != nil {
				cancel()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-usr1:
				logStats(log, e.Stats())
			}
		}
	}()
	log.Info("wanemu: running", zap.String("device", cfg.Device), zap.Int("sites", len(cfg.Sites)))
	err = e.Run(ctx, dev)
	cancel()
	wg.Wait()
	logStats(log, e.Stats())
	if err == nil {
		err = serveErr
	}
	return err
}

// logStats logs the counters, one line for the total and one per pair.
func logStats(log *zap.Logger, st Stats) {
	log.Info("wanemu: counters", zap.Uint64("packets", st.Total.Packets), zap.Uint64("bytes", st.Total.Bytes),
		zap.Uint64("lost", st.Total.Lost), zap.Uint64("overflow", st.Total.Overflow),
		zap.Uint64("down", st.Total.Down), zap.Uint64("write_err", st.Total.WriteErr), zap.Uint64("other", st.Other),
		zap.Duration("mean_late", st.Total.MeanLate()), zap.Duration("max_late", st.Total.LateMax))
	for _, p := range st.Pairs {
		log.Info("wanemu: pair", zap.String("from", p.From), zap.String("to", p.To),
			zap.Uint64("packets", p.Packets), zap.Uint64("bytes", p.Bytes), zap.Uint64("lost", p.Lost),
			zap.Uint64("overflow", p.Overflow), zap.Uint64("down", p.Down), zap.Int("queued_bytes", p.Queued))
	}
}
