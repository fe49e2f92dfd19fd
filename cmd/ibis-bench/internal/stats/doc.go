// Package stats holds the statistics of the ibis-bench suite: the robust test time of
// a set of repeated measurements (the lower sextile of the sorted values, which the
// Java message-passing micro-benchmark suite found better than mean or median for
// deriving models), and least-squares fits of the timing models: Hockney's
// T(n) = ts + tb*n, and a general linear model y = b0*f0(x) + b1*f1(x) + ... for the
// multidimensional-array model.
package stats
