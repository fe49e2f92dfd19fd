package registry

import (
	"slices"
	"testing"
)

// A Joined event of a member the client lists (a replay after a rejoin) is not
// delivered again, whether or not its number is the highest heard of; a new member,
// numbered above all or not, is listed and delivered once.
func TestApplyEventListsEachMemberOnce(t *testing.T) {
	c := newClient(defaultClientConfig(), "127.0.0.1:1")
	defer c.endLife()
	joined := func(seq uint64, id string) Event {
		return Event{Seq: seq, Type: Joined, Member: Identifier{Pool: "p", ID: id}}
	}
	for _, ev := range []Event{
		joined(1, "0"), joined(2, "1"), joined(3, "2"),
		joined(2, "1"),                 // a replay: listed, below the highest number
		joined(3, "2"),                 // a replay of the highest number heard of
		joined(4, "7"),                 // new, above all
		joined(5, "4"),                 // new, below the highest (numbers may come late)
		joined(6, "x"), joined(6, "x"), // not a number: listed once
		{Seq: 7, Type: Died, Member: Identifier{Pool: "p", ID: "1"}},
		joined(2, "1"), // after its death: listed again, as a replay after a restart would
	} {
		if c.applyEvent(ev) {
			t.Fatalf("%v taken for this member's own death", ev)
		}
	}
	var ids []string
	for _, m := range c.Members() {
		ids = append(ids, m.ID)
	}
	if want := []string{"0", "2", "7", "4", "x", "1"}; !slices.Equal(ids, want) {
		t.Errorf("members %v, want %v", ids, want)
	}
	delivered, _ := c.queue.Take(nil)
	var got []string
	for _, ev := range delivered {
		got = append(got, ev.Type.String()+" "+ev.Member.ID)
	}
	want := []string{"Joined 0", "Joined 1", "Joined 2", "Joined 7", "Joined 4", "Joined x", "Died 1", "Joined 1"}
	if !slices.Equal(got, want) {
		t.Errorf("delivered %v, want %v", got, want)
	}
}
