// Package conformance is the suite of IPL behaviours that every Ibis-Go implementation
// must pass. Each case runs a pool of real OS processes on 127.0.0.1: the test process
// is one member (it asserts), and it re-executes its own test binary for the others,
// which play their part and report failure through their exit status.
//
// An implementation plugs in with a test file such as
//
//	func TestMain(m *testing.M) {
//		if conformance.IsChild() {
//			os.Exit(conformance.RunChild())
//		}
//		goleak.VerifyTestMain(m)
//	}
//
//	func TestConformance(t *testing.T) { conformance.Run(t, conformance.Options{Impl: "tcp"}) }
//
// An implementation whose pool is an MPI job (impl/mp) runs the suite with RunMPI
// instead: each case becomes an mpirun job of the test binary, in which rank 0 plays the
// parent inside a test function that calls RunMPIParent, and the other ranks play the
// children (the same TestMain starts them).
//
// Across hosts (test/cluster), Options.RegistryHost puts the registry on the parent's host
// address and Options.Child starts each child on another host (a launcher prefix such as
// `ip netns exec`); without them everything runs on 127.0.0.1 as before.
package conformance
