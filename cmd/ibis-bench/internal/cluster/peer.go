package cluster

import (
	"encoding/json"
	"fmt"
	"os"
)

// EnvPeerArgs carries, JSON-encoded, the command line a started peer process runs
// instead of its own arguments. The test binary of a package that starts peers must
// honour it in TestMain (see PeerArgs), as main does.
const EnvPeerArgs = "IBIS_BENCH_PEER_ARGS"

// PeerArgs returns the arguments a started peer must run, and whether this process is
// such a peer.
func PeerArgs() ([]string, bool) {
	v, ok := os.LookupEnv(EnvPeerArgs)
	if !ok {
		return nil, false
	}
	var args []string
	if err := json.Unmarshal([]byte(v), &args); err != nil || len(args) == 0 {
		// A malformed value cannot come from this package; run nothing rather than
		// guessing, so the peer fails with a usage message.
		return []string{fmt.Sprintf("invalid-%s", EnvPeerArgs)}, true
	}
	return args, true
}

// IsPeer reports whether this process was started by the suite as a peer.
func IsPeer() bool {
	_, ok := os.LookupEnv(EnvPeerArgs)
	return ok
}
