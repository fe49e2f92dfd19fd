package stats

import (
	"fmt"
	"math"
)

// Hockney is the fitted point-to-point model T(n) = Ts + Tb*n: a start-up time and a
// time per byte (seconds), with the fit's coefficient of determination.
type Hockney struct {
	Ts, Tb float64
	R2     float64
}

// Bandwidth returns the asymptotic bandwidth 1/Tb in bytes per second (+Inf when
// the fitted Tb is not positive).
func (h Hockney) Bandwidth() float64 {
	if h.Tb <= 0 {
		return math.Inf(1)
	}
	return 1 / h.Tb
}

// HalfPerformanceLength returns n1/2 = Ts/Tb, the message size that reaches half
// the asymptotic bandwidth.
func (h Hockney) HalfPerformanceLength() float64 {
	if h.Tb <= 0 {
		return math.Inf(1)
	}
	return h.Ts / h.Tb
}

// At returns the model's time for n bytes.
func (h Hockney) At(n float64) float64 { return h.Ts + h.Tb*n }

// FitHockney fits T(n) = ts + tb*n to (n[i], t[i]) by ordinary least squares.
func FitHockney(n, t []float64) (Hockney, error) {
	f, err := FitLinear(t, n, func(x float64) []float64 { return []float64{1, x} })
	if err != nil {
		return Hockney{}, fmt.Errorf("stats: Hockney fit: %w", err)
	}
	return Hockney{Ts: f.Coef[0], Tb: f.Coef[1], R2: f.R2}, nil
}

// Linear is a fitted linear model y = sum_j Coef[j]*f_j(x).
type Linear struct {
	Coef []float64
	// R2 is the coefficient of determination (1 for a perfect fit; NaN when y is
	// constant).
	R2 float64
	// RMS is the root mean square of the residuals.
	RMS float64
}

// FitLinear fits y[i] ≈ sum_j c_j * basis(x[i])[j] by least squares and returns the
// coefficients c. basis must return the same number of regressors for every x (for
// the 2-D array model: 1, N, N*N). It solves the normal equations with scaled,
// pivoted Gaussian elimination, enough for the handful of well-separated
// regressors of timing models.
func FitLinear(y, x []float64, basis func(x float64) []float64) (Linear, error) {
	if len(x) != len(y) {
		return Linear{}, fmt.Errorf("%w: %d x values, %d y values", ErrShape, len(x), len(y))
	}
	if len(x) == 0 {
		return Linear{}, ErrNoData
	}
	rows := make([][]float64, len(x))
	for i, xi := range x {
		rows[i] = basis(xi)
		if len(rows[i]) != len(rows[0]) {
			return Linear{}, fmt.Errorf("%w: basis gave %d regressors, then %d", ErrShape, len(rows[0]), len(rows[i]))
		}
	}
	return FitRows(y, rows)
}

// FitRows fits y[i] ≈ sum_j c_j * rows[i][j] by least squares: the design matrix is
// given row by row, for models whose regressors are not functions of one variable.
func FitRows(y []float64, rows [][]float64) (Linear, error) {
	if len(rows) != len(y) {
		return Linear{}, fmt.Errorf("%w: %d rows, %d y values", ErrShape, len(rows), len(y))
	}
	if len(rows) == 0 {
		return Linear{}, ErrNoData
	}
	p := len(rows[0])
	if p == 0 {
		return Linear{}, fmt.Errorf("%w: no regressors", ErrShape)
	}
	if len(rows) < p {
		return Linear{}, fmt.Errorf("%w: %d points for %d parameters", ErrSingular, len(rows), p)
	}
	// Scale each regressor to unit maximum so that 1, N and N*N end up comparable.
	scale := make([]float64, p)
	for _, r := range rows {
		if len(r) != p {
			return Linear{}, fmt.Errorf("%w: rows of %d and %d regressors", ErrShape, p, len(r))
		}
		for j, v := range r {
			scale[j] = math.Max(scale[j], math.Abs(v))
		}
	}
	for j, s := range scale {
		if s == 0 {
			return Linear{}, fmt.Errorf("%w: regressor %d is zero everywhere", ErrSingular, j)
		}
	}
	// Normal equations A c = b with A = X'X, b = X'y (X scaled).
	a := make([][]float64, p)
	for j := range a {
		a[j] = make([]float64, p+1)
	}
	for i, r := range rows {
		for j := range p {
			xj := r[j] / scale[j]
			for k := range p {
				a[j][k] += xj * r[k] / scale[k]
			}
			a[j][p] += xj * y[i]
		}
	}
	c, err := solve(a)
	if err != nil {
		return Linear{}, err
	}
	for j := range c {
		c[j] /= scale[j]
	}
	var mean float64
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	var ssRes, ssTot float64
	for i, r := range rows {
		var pred float64
		for j, v := range r {
			pred += c[j] * v
		}
		ssRes += (y[i] - pred) * (y[i] - pred)
		ssTot += (y[i] - mean) * (y[i] - mean)
	}
	r2 := math.NaN()
	if ssTot > 0 {
		r2 = 1 - ssRes/ssTot
	}
	return Linear{Coef: c, R2: r2, RMS: math.Sqrt(ssRes / float64(len(y)))}, nil
}

// solve solves the augmented system a (p rows of p+1) by Gaussian elimination with
// partial pivoting.
func solve(a [][]float64) ([]float64, error) {
	p := len(a)
	for col := range p {
		piv := col
		for r := col + 1; r < p; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		if math.Abs(a[piv][col]) < 1e-12 {
			return nil, fmt.Errorf("%w: regressor %d is (nearly) a combination of the others", ErrSingular, col)
		}
		a[col], a[piv] = a[piv], a[col]
		for r := col + 1; r < p; r++ {
			f := a[r][col] / a[col][col]
			for k := col; k <= p; k++ {
				a[r][k] -= f * a[col][k]
			}
		}
	}
	c := make([]float64, p)
	for r := p - 1; r >= 0; r-- {
		s := a[r][p]
		for k := r + 1; k < p; k++ {
			s -= a[r][k] * c[k]
		}
		c[r] = s / a[r][r]
	}
	return c, nil
}
