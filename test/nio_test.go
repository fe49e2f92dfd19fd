package test

import (
	"testing"

	"github.com/ibisgo/ibis/impl/nio"
	"github.com/ibisgo/ibis/test/conformance"
)

// TestConformanceNIO runs the IPL conformance suite over impl/nio for every pair of a
// send flavour and a receive flavour, forced for every port through the properties
// (a forced blocking receive flavour leaves many-to-one ports on nonblocking).
func TestConformanceNIO(t *testing.T) {
	flavours := []string{"blocking", "nonblocking", "thread"}
	for _, s := range flavours {
		for _, r := range flavours {
			t.Run(s+"-"+r, func(t *testing.T) {
				conformance.Run(t, conformance.Options{Impl: nio.Name, Properties: map[string]string{
					nio.PropertySend: s, nio.PropertyReceive: r,
				}})
			})
		}
	}
}
