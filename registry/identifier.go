package registry

import "github.com/ibisgo/ibis/ipl"

// Identifier names one member of a pool: ipl's IbisIdentifier, which the registry hands
// out at join time. Address is opaque to the registry (as given with WithAddress), Tag
// is the user's (WithTag).
type Identifier = ipl.IbisIdentifier
