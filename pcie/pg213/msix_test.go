package pg213

import (
	"testing"

	"onic/tlp"
)

// TestMSIX: the interface sends a signalled interrupt MSIXLatency cycles
// later as a one-DW write that passes the strict decoder, fails it while
// the function may not send it, and refuses what PG213 forbids.
func TestMSIX(t *testing.T) {
	self := tlp.NewID(3, 0, 0)
	ok := FunctionState{Enable: true, BusMaster: true}
	for _, c := range []struct {
		name string
		st   FunctionState
		addr uint64
		sent bool
	}{
		{"sent-3dw", ok, 0xFEE0_1000, true},
		{"sent-4dw", ok, 0x1_2345_6780, true},
		{"disabled", FunctionState{BusMaster: true}, 0xFEE0_1000, false},
		{"masked", FunctionState{Enable: true, Mask: true, BusMaster: true}, 0xFEE0_1000, false},
		{"no-bus-master", FunctionState{Enable: true}, 0xFEE0_1000, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var x MSIX
			if err := x.Signal(MSIXRequest{Address: c.addr, Data: 0x41}, c.st); err != nil {
				t.Fatal(err)
			}
			if err := x.Signal(MSIXRequest{Address: c.addr}, c.st); err == nil {
				t.Error("a second signal before sent or fail was taken")
			}
			var r MSIXResult
			n := 0
			for !r.Sent && !r.Fail && n < 100 {
				r, n = x.Cycle(self), n+1
			}
			if n != MSIXLatency || r.Sent != c.sent || r.Fail == c.sent || x.Busy() {
				t.Fatalf("after %d cycles: %+v (want sent %v after %d)", n, r, c.sent, MSIXLatency)
			}
			if !c.sent {
				if r.Message != nil {
					t.Errorf("a failed interrupt sent %v", r.Message)
				}
				return
			}
			b, err := r.Message.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var got tlp.TLP
			if err := got.DecodeValidate(b); err != nil {
				t.Fatalf("the message fails the strict decoder: %v", err)
			}
			if got.Kind() != tlp.MWr || got.Address != c.addr || got.RequesterID != self || got.Length != 1 || got.FirstBE != 0xF ||
				len(got.Data) != 4 || got.Data[0] != 0x41 || (c.addr>>32 == 0) != (got.Fmt == tlp.Fmt3DWData) {
				t.Errorf("message %+v", got)
			}
		})
	}
	var x MSIX
	for _, r := range []MSIXRequest{{Address: 0xFEE0_1002}, {Address: 0xFEE0_1000, Function: 1}} {
		if err := x.Signal(r, ok); err == nil {
			t.Errorf("signal %+v taken", r)
		}
	}
}
