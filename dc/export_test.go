package dc

// Exported for the tests of package dc_test.
const (
	MaxWideAreaBackoff = maxWideAreaBackoff
	MinBackoff         = minBackoff
)
