package ipl

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// propertyEnvs maps implementation properties to the environment variables that set
// them, as the implementations registered them.
var propertyEnvs = struct {
	sync.RWMutex
	byProperty map[string]string
}{byProperty: map[string]string{}}

// RegisterPropertyEnv names the environment variable that sets an implementation
// property (WithProperty, -property) when neither an option nor a flag does ("" for
// none: RegisterProperty), so that
// implementations read their settings through Config.Property alone and the environment
// is applied in one place, by ApplyEnvironment, with the rest of the configuration.
// Implementations call it from an init function, next to Register.
func RegisterPropertyEnv(property, env string) {
	propertyEnvs.Lock()
	defer propertyEnvs.Unlock()
	propertyEnvs.byProperty[property] = env
}

// RegisterProperty names a property an implementation reads that no environment
// variable sets. With RegisterPropertyEnv it lists the implementation's properties, so
// that New can refuse a misspelt one (checkProperties).
func RegisterProperty(property string) { RegisterPropertyEnv(property, "") }

// checkProperties refuses a property that names a linked implementation ("tcp." for
// tcp) but none of the properties it registered: a misspelt name would otherwise be
// ignored without a word. Properties of implementations not linked in are left alone,
// as are those without an implementation's prefix.
func (c *Config) checkProperties() error {
	propertyEnvs.RLock()
	defer propertyEnvs.RUnlock()
	for key := range c.Properties {
		impl, _, ok := strings.Cut(key, ".")
		if _, known := propertyEnvs.byProperty[key]; known || !ok || !slices.Contains(Implementations(), impl) {
			continue
		}
		var have []string
		for p := range propertyEnvs.byProperty {
			if strings.HasPrefix(p, impl+".") {
				have = append(have, p)
			}
		}
		slices.Sort(have)
		return fmt.Errorf("%w: unknown property %q: %s has %s", ErrInvalidArgument, key, impl, strings.Join(have, ", "))
	}
	return nil
}

// applyPropertyEnvs fills the properties still unset from their environment variables.
func (c *Config) applyPropertyEnvs(get func(string) string) {
	propertyEnvs.RLock()
	defer propertyEnvs.RUnlock()
	for prop, env := range propertyEnvs.byProperty {
		if env == "" || c.Property(prop) != "" {
			continue
		}
		if v := get(env); v != "" {
			if c.Properties == nil {
				c.Properties = map[string]string{}
			}
			c.Properties[prop] = v
		}
	}
}
