// Command ibis-wanemu is the wide-area link emulator of the virtual cluster's grid
// (internal/wanemu): it holds the packets that cross between sites for their delay and
// drops a share of them. The cluster starts it in its router namespace:
//
//	ibis-wanemu -config FILE
//
// It needs the TUN device the configuration names, and so root.
package main

import (
	"os"

	"github.com/ibisgo/ibis/internal/wanemu"
)

func main() { os.Exit(wanemu.Main(os.Args[1:], os.Stderr)) }
