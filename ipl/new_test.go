package ipl

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type fakeDriver struct{ caps []string }

func (f fakeDriver) Capabilities() []string { return f.caps }
func (f fakeDriver) Open(context.Context, *Config) (Ibis, error) {
	return nil, errors.New("test driver does not open")
}

func TestChooseListsWhatIsMissing(t *testing.T) {
	Register("zz-small", 100, fakeDriver{caps: []string{ConnectionOneToOne, SerializationByte, ReceiveExplicit}})
	Register("zz-big", 101, fakeDriver{caps: []string{ConnectionOneToOne, SerializationByte, SerializationObject, ReceiveExplicit, Signals}})
	pt := MustPortType(ConnectionOneToOne, SerializationObject, ReceiveExplicit)

	cfg := &Config{PortTypes: []PortType{pt}, Capabilities: []string{Signals}}
	e, err := choose(cfg)
	// tcp, linked in by the examples, may come first; the small driver must never win.
	if err != nil || e.name == "zz-small" || len(missing(e.drv.Capabilities(), required(cfg))) > 0 {
		t.Fatalf("choose = %q, %v; want the first that offers everything", e.name, err)
	}
	cfg.Implementation = "zz-small"
	_, err = choose(cfg)
	if !errors.Is(err, ErrNoImplementation) || !strings.Contains(err.Error(), SerializationObject) || !strings.Contains(err.Error(), Signals) {
		t.Errorf("named implementation lacking capabilities: %v", err)
	}
	cfg.Implementation = "nope"
	if _, err := choose(cfg); !errors.Is(err, ErrNoImplementation) || !strings.Contains(err.Error(), "not linked") {
		t.Errorf("unknown implementation: %v", err)
	}
	cfg.Implementation = ""
	RegisterCapability("test.nobody", "test")
	cfg.PortTypes = []PortType{MustPortType(ConnectionOneToOne, SerializationByte, ReceiveExplicit, "test.nobody")}
	if _, err := choose(cfg); !errors.Is(err, ErrNoImplementation) || !strings.Contains(err.Error(), "zz-big lacks test.nobody") {
		t.Errorf("no implementation fits: %v", err)
	}
}

func TestNewRejectsBadCapabilities(t *testing.T) {
	ctx := context.Background()
	if _, err := New(ctx, WithCapabilities(ReceiveExplicit)); err == nil || !strings.Contains(err.Error(), "port capability") {
		t.Errorf("port capability as Ibis capability: %v", err)
	}
	if _, err := New(ctx, WithCapabilities("warp.drive")); err == nil || !strings.Contains(err.Error(), "unknown Ibis capability") {
		t.Errorf("unknown capability: %v", err)
	}
	if _, err := New(ctx, WithPortTypes(PortType{})); !errors.Is(err, ErrInvalidPortType) {
		t.Errorf("zero port type: %v", err)
	}
}

func TestApplyEnvironment(t *testing.T) {
	env := map[string]string{EnvRegistry: "h:1", EnvPool: "p", EnvPoolSize: "4", EnvImpl: "tcp", EnvHeartbeat: "250ms",
		EnvDeathTimeout: "45s"}
	look := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg := &Config{Pool: "from-code"}
	if err := cfg.ApplyEnvironment(look); err != nil {
		t.Fatal(err)
	}
	if cfg.Registry != "h:1" || cfg.Pool != "from-code" || cfg.PoolSize != 4 || cfg.Implementation != "tcp" || cfg.HeartbeatInterval.String() != "250ms" ||
		cfg.DeathTimeout.String() != "45s" {
		t.Errorf("config after environment: %+v", cfg)
	}
	env[EnvDeathTimeout] = "-1s"
	if err := (&Config{}).ApplyEnvironment(look); err == nil || !strings.Contains(err.Error(), EnvDeathTimeout) {
		t.Errorf("bad death timeout: %v", err)
	}
	env[EnvDeathTimeout] = "45s"
	env[EnvPoolSize] = "four"
	if err := (&Config{}).ApplyEnvironment(look); err == nil || !strings.Contains(err.Error(), EnvPoolSize) {
		t.Errorf("bad pool size: %v", err)
	}
}
