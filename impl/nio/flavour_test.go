package nio

import (
	"errors"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/ipl"
)

func TestFlavourChoice(t *testing.T) {
	base := []string{ipl.SerializationData, ipl.ReceiveExplicit, ipl.CommunicationReliable}
	pt := func(caps ...string) ipl.PortType { return ipl.MustPortType(append(caps, base...)...) }
	one, many, m2o := pt(ipl.ConnectionOneToOne), pt(ipl.ConnectionOneToMany), pt(ipl.ConnectionManyToOne)
	cases := []struct {
		name          string
		ch            chooser
		pt            ipl.PortType
		send, receive Flavour
	}{
		{"one-to-one by type", chooser{}, one, Blocking, Blocking},
		{"one-to-many by type", chooser{}, many, NonBlocking, Blocking},
		{"many-to-one by type", chooser{}, m2o, Blocking, NonBlocking},
		{"forced thread", chooser{send: Thread, receive: Thread}, one, Thread, Thread},
		{"forced blocking skips many-to-one", chooser{receive: Blocking}, m2o, Blocking, NonBlocking},
		{"capability beats forced", chooser{send: Thread, receive: Thread},
			pt(ipl.ConnectionOneToOne, SendPortNonBlocking, ReceivePortBlocking), NonBlocking, Blocking},
	}
	for _, c := range cases {
		s, err1 := c.ch.sendFlavour(c.pt)
		r, err2 := c.ch.receiveFlavour(c.pt)
		if err1 != nil || err2 != nil || s != c.send || r != c.receive {
			t.Errorf("%s: send %v receive %v (%v, %v), want %v and %v", c.name, s, r, err1, err2, c.send, c.receive)
		}
	}
	if _, err := (chooser{}).receiveFlavour(pt(ipl.ConnectionManyToOne, ReceivePortBlocking)); !errors.Is(err, ipl.ErrUnsupported) {
		t.Errorf("blocking many-to-one receive port: %v, want ErrUnsupported", err)
	}
	if _, err := (chooser{}).sendFlavour(pt(ipl.ConnectionOneToOne, SendPortBlocking, SendPortThread)); !errors.Is(err, ipl.ErrInvalidPortType) {
		t.Errorf("two send flavours: %v, want ErrInvalidPortType", err)
	}
}

// The environment reaches the flavours through ipl's configuration (ApplyEnvironment,
// as ipl.New does); a property given as an option wins over it.
func TestForcedFlavourSources(t *testing.T) {
	t.Setenv(EnvSend, "thread")
	t.Setenv(EnvReceive, "nonblocking")
	cfg := &ipl.Config{Properties: map[string]string{PropertySend: "blocking"}}
	if err := cfg.ApplyEnvironment(nil); err != nil {
		t.Fatal(err)
	}
	ch, err := newChooser(cfg)
	if err != nil || ch.send != Blocking || ch.receive != NonBlocking {
		t.Errorf("property over environment: %+v, %v", ch, err)
	}
	t.Setenv(EnvReceive, "fast")
	cfg = &ipl.Config{}
	if err := cfg.ApplyEnvironment(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := newChooser(cfg); err == nil || !strings.Contains(err.Error(), "$"+EnvReceive) {
		t.Errorf("an unknown flavour in the environment: %v, want an error naming $%s", err, EnvReceive)
	}
}
