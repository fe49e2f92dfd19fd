package ipl

import (
	"errors"
	"strings"
	"testing"
)

func TestNewPortTypeValidation(t *testing.T) {
	cases := []struct {
		name    string
		caps    []string
		mention string
	}{
		{"no connection kind", []string{SerializationData, ReceiveExplicit}, "no connection kind"},
		{"two kinds", []string{ConnectionOneToOne, ConnectionManyToOne, SerializationData, ReceiveExplicit}, "several connection kinds"},
		{"no serialization", []string{ConnectionOneToOne, ReceiveExplicit}, "no serialization"},
		{"no receive", []string{ConnectionOneToOne, SerializationData}, "no way to receive"},
		{"poll without explicit", []string{ConnectionOneToOne, SerializationData, ReceiveAutoUpcalls, ReceivePoll}, "refine"},
		{"unknown", []string{ConnectionOneToOne, SerializationData, ReceiveExplicit, "communication.telepathy"}, `"communication.telepathy"`},
		{"ibis capability", []string{ConnectionOneToOne, SerializationData, ReceiveExplicit, ClosedWorld}, "Ibis capability"},
	}
	for _, c := range cases {
		_, err := NewPortType(c.caps...)
		if !errors.Is(err, ErrInvalidPortType) || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: got %v, want ErrInvalidPortType mentioning %q", c.name, err, c.mention)
		}
	}
}

func TestPortTypeSetOperations(t *testing.T) {
	a := MustPortType(ConnectionOneToMany, SerializationObject, SerializationData, ReceiveExplicit, ReceiveExplicit)
	b, err := ParsePortType(a.String())
	if err != nil || !a.Equal(b) {
		t.Fatalf("round trip through String: %v, %v", b, err)
	}
	if !a.OneToMany() || a.ManyToOne() || a.Serialization() != SerializationObject || a.ConnectionKind() != ConnectionOneToMany {
		t.Errorf("derived properties wrong for %s", a)
	}
	c := MustPortType(ConnectionManyToOne, SerializationData, ReceiveExplicit, CommunicationNumbered)
	onlyA, onlyC := a.Diff(c)
	if strings.Join(onlyA, ",") != "connection.onetomany,serialization.object" ||
		strings.Join(onlyC, ",") != "communication.numbered,connection.manytoone" {
		t.Errorf("Diff = %v / %v", onlyA, onlyC)
	}
	RegisterCapability("test.flavour", "test")
	if _, err := NewPortType(ConnectionOneToOne, SerializationByte, ReceiveExplicit, "test.flavour"); err != nil {
		t.Errorf("registered capability refused: %v", err)
	}
}
