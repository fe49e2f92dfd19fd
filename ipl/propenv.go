package ipl

import "sync"

// propertyEnvs maps implementation properties to the environment variables that set
// them, as the implementations registered them.
var propertyEnvs = struct {
	sync.RWMutex
	byProperty map[string]string
}{byProperty: map[string]string{}}

// RegisterPropertyEnv names the environment variable that sets an implementation
// property (WithProperty, -property) when neither an option nor a flag does, so that
// implementations read their settings through Config.Property alone and the environment
// is applied in one place, by ApplyEnvironment, with the rest of the configuration.
// Implementations call it from an init function, next to Register.
func RegisterPropertyEnv(property, env string) {
	propertyEnvs.Lock()
	defer propertyEnvs.Unlock()
	propertyEnvs.byProperty[property] = env
}

// applyPropertyEnvs fills the properties still unset from their environment variables.
func (c *Config) applyPropertyEnvs(get func(string) string) {
	propertyEnvs.RLock()
	defer propertyEnvs.RUnlock()
	for prop, env := range propertyEnvs.byProperty {
		if c.Property(prop) != "" {
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
