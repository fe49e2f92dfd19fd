// Package memexp holds the in-memory experiments of ibis-bench: the
// conversion benchmark (Table 6.1 of the NioIbis thesis) and the
// serialization benchmark (Table 6.2), measured without any network so that
// they show what turning typed data into message bytes and back costs by
// itself.
//
// The package is a library: Conversion and Serialization take their
// parameters as structs and functional options and return result structs;
// they neither parse flags nor print. The ibis-bench subcommands
// "conversion" and "serialization" are thin layers that turn flags into
// parameters and results into tables.
//
// # Method
//
// Every case is one operation (encode a slice, decode a message, ...)
// repeated in a batch that is long enough to beat the clock (at least
// WithMinBatch), and the batch is timed WithRepetitions times. The cases
// of a group (one element type and size, or one payload and serialization)
// take turns batch by batch, so that a slow phase of a shared machine hits
// them alike and their ratios (native against swapped, loop against view)
// stay steady even when the absolute figures do not. The reported
// time per operation is a robust statistic of those per-operation times: by
// default the lower sextile of the sorted timings (the value one sixth of
// the way up), which discards the outliers a shared machine produces, or the
// median (WithStatistic). Before and after its timings every case checks
// that its data actually round-trips (the encoded bytes equal an
// independent reference encoding, the decoded values equal the originals);
// a case that does not fails the experiment with ErrMismatch rather than
// report the speed of a wrong result.
//
// Every case runs in the native byte order and in the swapped one. Ibis lets
// the receiver make right, so the swapped order shows what a pair of
// machines of different endianness pays; between machines of the same
// order it costs nothing.
package memexp
