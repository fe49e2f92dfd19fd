package ipl

import "testing"

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
