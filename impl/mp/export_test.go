//go:build mpi

package mp

// WaitingForCredit reports how many writers of the process wait for credit.
func WaitingForCredit() int32 { return creditWaiters.Load() }

// CreditWindow is what a connection's dialler may send ahead of its reader.
const CreditWindow = creditWindow
