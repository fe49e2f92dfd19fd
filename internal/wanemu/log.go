package wanemu

import (
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapCore logs JSON lines at info level and above to w.
func zapCore(w io.Writer) zapcore.Core {
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	return zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(w), zap.InfoLevel)
}
