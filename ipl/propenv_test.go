package ipl

import (
	"errors"
	"strings"
	"testing"
)

// A property an implementation registered takes its environment variable's value, unless
// an option set it.
func TestPropertyFromEnvironment(t *testing.T) {
	RegisterPropertyEnv("test.prop", "IBIS_TEST_PROP")
	look := func(k string) (string, bool) {
		if k == "IBIS_TEST_PROP" {
			return " from-env ", true
		}
		return "", false
	}
	var c Config
	if err := c.ApplyEnvironment(look); err != nil || c.Property("test.prop") != "from-env" {
		t.Errorf("from the environment: %q, %v", c.Property("test.prop"), err)
	}
	c = Config{}
	WithProperty("test.prop", "from-option")(&c)
	if err := c.ApplyEnvironment(look); err != nil || c.Property("test.prop") != "from-option" {
		t.Errorf("an option wins: %q, %v", c.Property("test.prop"), err)
	}
}

// A property that names a linked implementation but none of its properties (a
// misspelling) is refused, naming the ones it has; those of implementations not linked,
// and those of no implementation, are left alone.
func TestMisspeltPropertyRefused(t *testing.T) {
	Register("zz-props", 102, fakeDriver{})
	RegisterProperty("zz-props.spin")
	for _, tc := range []struct {
		key  string
		want bool // refused
	}{
		{"zz-props.spin", false},
		{"zz-props.spn", true},
		{"notlinked.spin", false},
		{"plain", false},
	} {
		c := Config{}
		WithProperty(tc.key, "1")(&c)
		err := c.checkProperties()
		if refused := errors.Is(err, ErrInvalidArgument) && strings.Contains(err.Error(), "zz-props.spin"); refused != tc.want {
			t.Errorf("property %q: %v; want refused %v", tc.key, err, tc.want)
		}
	}
}
