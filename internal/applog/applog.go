// Package applog makes the logger the applications give Ibis: warnings on stderr (a
// registry that is not there, a refused connection), or everything with -v, so that a
// program's stdout holds only its results.
package applog

import "go.uber.org/zap"

// New logs on stderr at warning level, or at debug level when verbose. It never fails:
// should zap refuse the configuration, the programs run without a log.
func New(verbose bool) *zap.Logger {
	zc := zap.NewDevelopmentConfig()
	zc.OutputPaths = []string{"stderr"}
	zc.ErrorOutputPaths = []string{"stderr"}
	zc.DisableStacktrace = true
	if !verbose {
		zc.Level = zap.NewAtomicLevelAt(zap.WarnLevel)
	}
	l, err := zc.Build()
	if err != nil {
		return zap.NewNop()
	}
	return l
}
