package test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	_ "github.com/ibisgo/ibis/impl/tcp"

	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/test/conformance"
)

func TestMain(m *testing.M) {
	if conformance.IsChild() {
		os.Exit(conformance.RunChild())
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

// TestConformanceTCP runs the IPL conformance suite over impl/tcp, across processes.
func TestConformanceTCP(t *testing.T) {
	conformance.Run(t, conformance.Options{Impl: "tcp"})
}
