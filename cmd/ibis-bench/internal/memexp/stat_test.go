package memexp

import (
	"errors"
	"testing"
)

func TestStatisticNames(t *testing.T) {
	for _, s := range []Statistic{StatLowerSextile, StatMedian} {
		got, err := ParseStatistic(s.String())
		if err != nil || got != s {
			t.Errorf("ParseStatistic(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseStatistic("mean"); !errors.Is(err, ErrInvalid) {
		t.Errorf("ParseStatistic(mean): %v, want ErrInvalid", err)
	}
	if _, err := Conversion(t.Context(), ConversionParams{}, WithStatistic(Statistic(7))); !errors.Is(err, ErrInvalid) {
		t.Errorf("an unknown statistic: %v, want ErrInvalid", err)
	}
}
