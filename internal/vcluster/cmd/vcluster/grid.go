package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/ibisgo/ibis/internal/vcluster"
)

// gridOpts are up's flags for a grid of sites.
type gridOpts struct {
	sites, perSite      *int
	delay               *time.Duration
	rate, loss, fw, nat *string
}

func gridFlags(fs *flag.FlagSet) *gridOpts {
	return &gridOpts{
		sites:   fs.Int("sites", 0, "build a grid of this many sites (0: one network of -hosts hosts)"),
		perSite: fs.Int("hosts-per-site", 4, "hosts per site with -sites"),
		delay:   fs.Duration("wan-delay", 0, "one-way delay between two sites (the round trip is twice it)"),
		rate:    fs.String("wan-rate", "", "rate of each site's wide-area link, e.g. 100mbit; none when empty"),
		loss:    fs.String("wan-loss", "", "share of packets lost between sites, e.g. 0.1%"),
		fw:      fs.String("firewall", "", "firewalled sites, e.g. 2 or 2,4: no connection from other sites gets in"),
		nat:     fs.String("nat", "", "NATed sites, e.g. 3: hosts behind the gateway's one public address"),
	}
}

func (g *gridOpts) options() ([]vcluster.Option, error) {
	if *g.sites == 0 {
		if *g.delay != 0 || *g.rate != "" || *g.loss != "" || *g.fw != "" || *g.nat != "" {
			return nil, errors.New("-wan-*, -firewall and -nat need -sites")
		}
		return nil, nil
	}
	var rate uint64
	var loss float64
	var err error
	if *g.rate != "" {
		if rate, err = vcluster.ParseRate(*g.rate); err != nil {
			return nil, err
		}
	}
	if *g.loss != "" {
		if loss, err = vcluster.ParseLoss(*g.loss); err != nil {
			return nil, err
		}
	}
	fw, err := vcluster.ParseSites(*g.fw)
	if err != nil {
		return nil, err
	}
	nat, err := vcluster.ParseSites(*g.nat)
	if err != nil {
		return nil, err
	}
	return []vcluster.Option{vcluster.WithSites(*g.sites, *g.perSite), vcluster.WithWAN(*g.delay, rate, loss),
		vcluster.WithFirewall(fw...), vcluster.WithNAT(nat...)}, nil
}

// wan runs `wan down|up SITE`, `wan set SITE DELAY LOSS` or `wan stats`.
func wan(args []string, w io.Writer) error {
	if len(args) == 0 {
		return errors.New("want down SITE, up SITE, set SITE DELAY LOSS or stats")
	}
	c, err := vcluster.Attach(id)
	if err != nil {
		return err
	}
	ctx := context.Background()
	site := 0
	if args[0] != "stats" {
		if len(args) < 2 {
			return fmt.Errorf("wan %s: want a site number", args[0])
		}
		if site, err = strconv.Atoi(args[1]); err != nil {
			return fmt.Errorf("wan %s: site %q is not a number", args[0], args[1])
		}
	}
	switch {
	case args[0] == "down" && len(args) == 2:
		err = c.WANDown(ctx, site)
	case args[0] == "up" && len(args) == 2:
		err = c.WANUp(ctx, site)
	case args[0] == "set" && len(args) == 4:
		delay, derr := time.ParseDuration(args[2])
		loss, lerr := vcluster.ParseLoss(args[3])
		if err = errors.Join(derr, lerr); err == nil {
			err = c.SetWAN(ctx, site, delay, loss)
		}
	case args[0] == "stats" && len(args) == 1:
		st, serr := c.WANStats(ctx)
		if serr != nil {
			return serr
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	default:
		return fmt.Errorf("wan %q: want down SITE, up SITE, set SITE DELAY LOSS or stats", args)
	}
	return err
}

// wancheck measures round trips and a bulk transfer between two hosts.
func wancheck(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("wancheck", flag.ContinueOnError)
	n := fs.Int("n", 50, "round trips to measure")
	size := fs.Int64("bytes", 20_000_000, "bytes of the bulk transfer (0: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return errors.New("want FROM TO, e.g. h1 h5")
	}
	from, to := fs.Arg(0), fs.Arg(1)
	c, err := vcluster.Attach(id)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rtt, err := c.MeasureRTT(ctx, from, to, *n)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s -> %s: round trip (median of %d): connect %.3f ms, echo %.3f ms\n", from, to,
		rtt.Samples, ms(rtt.Connect), ms(rtt.Echo))
	if *size > 0 {
		tr, err := c.MeasureTransfer(ctx, from, to, *size)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s -> %s: %d bytes in %.3f s: %.2f Mbit/s, intact %v\n", from, to, tr.Bytes,
			tr.Elapsed.Seconds(), tr.BitsPerSec()/1e6, tr.Intact)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
