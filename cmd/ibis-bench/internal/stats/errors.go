package stats

import "errors"

var (
	// ErrNoData: a statistic or fit was asked of no measurements.
	ErrNoData = errors.New("stats: no data")
	// ErrSingular: the fit's equations do not determine its parameters (too few
	// distinct points for the number of parameters, or collinear regressors).
	ErrSingular = errors.New("stats: singular fit")
	// ErrShape: the inputs of a fit disagree in length.
	ErrShape = errors.New("stats: mismatched lengths")
)
