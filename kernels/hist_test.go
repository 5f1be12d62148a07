package kernels

import (
	"strings"
	"testing"

	"onic/hdlgen/sim"
)

// TestHistogramClear: after records are counted, a write of 1 to CTRL
// clears every bin and the record count, holding the input meanwhile
// (STATUS reads clearing), and counting starts again from zero.
func TestHistogramClear(t *testing.T) {
	k, err := Histogram(HistSpec{Field: Field{Record: 16, Offset: 0, Width: 1}, Shift: 0, Bins: 8}, 64)
	if err != nil {
		t.Fatal(err)
	}
	m, err := k.Module()
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	get := func(n string) uint64 { v, _ := s.Get(n); return v }
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	s.Set("m_tready", 1)
	s.Set("s_axil_bready", 1)
	s.Set("s_axil_rready", 1)
	read := func(a uint64) uint64 {
		s.Set("s_axil_araddr", a)
		s.Set("s_axil_arvalid", 1)
		for get("s_axil_arready") == 0 {
			s.Step()
		}
		s.Step()
		s.Set("s_axil_arvalid", 0)
		for get("s_axil_rvalid") == 0 {
			s.Step()
		}
		v := get("s_axil_rdata")
		s.Step()
		return v
	}
	// A beat of four records in bins 3, 3, 5, 3, offered until taken.
	send := func() {
		data := make([]uint64, 8)
		data[0], data[2], data[4], data[6] = 3, 3, 5, 3
		s.SetWords("s0_tdata", data)
		s.SetWords("s0_tkeep", []uint64{^uint64(0)})
		s.Set("s0_tlast", 1)
		s.Set("s0_tvalid", 1)
		for c := 0; get("s0_tready") == 0; c++ {
			if c > 100 {
				t.Fatal("beat never taken")
			}
			s.Step()
		}
		s.Step()
		s.Set("s0_tvalid", 0)
		s.Step()
		s.Step()
	}
	send()
	if r, b3, b5 := read(HistRecords), read(HistBin0+12), read(HistBin0+20); r != 4 || b3 != 3 || b5 != 1 {
		t.Fatalf("records %d, bin 3 %d, bin 5 %d; want 4, 3, 1", r, b3, b5)
	}
	s.Set("s_axil_awaddr", HistCtrl)
	s.Set("s_axil_wdata", 1)
	s.Set("s_axil_wstrb", 0xF)
	s.Set("s_axil_awvalid", 1)
	s.Set("s_axil_wvalid", 1)
	s.Step()
	s.Set("s_axil_awvalid", 0)
	s.Set("s_axil_wvalid", 0)
	if st := read(HistStatus); st != 1 || get("s0_tready") != 0 {
		t.Fatalf("status %d, ready %d while clearing", st, get("s0_tready"))
	}
	for range 10 {
		s.Step()
	}
	if r, b3 := read(HistRecords), read(HistBin0+12); r != 0 || b3 != 0 {
		t.Fatalf("after clear: records %d, bin 3 %d", r, b3)
	}
	send()
	if r, b3 := read(HistRecords), read(HistBin0+12); r != 4 || b3 != 3 {
		t.Fatalf("counting again: records %d, bin 3 %d", r, b3)
	}
	if n := read(HistBins); n != 8 {
		t.Fatalf("BINS reads %d", n)
	}
}

// TestHistogramBadSpecs: each mistake in a spec is named.
func TestHistogramBadSpecs(t *testing.T) {
	for _, c := range []struct {
		spec HistSpec
		want string
	}{
		{HistSpec{Field: Field{Record: 24, Offset: 0, Width: 2}, Bins: 16}, "record: 24 bytes"},
		{HistSpec{Field: Field{Record: 16, Offset: 0, Width: 2}, Bins: 12}, "bins: 12"},
		{HistSpec{Field: Field{Record: 16, Offset: 0, Width: 1}, Shift: 2, Bins: 128}, "shift: bits 8 to 2 are outside a 1-byte field"},
		{HistSpec{Field: Field{Record: 16, Offset: 15, Width: 2}, Bins: 16}, "offset: a 2-byte field at 15"},
	} {
		if _, err := Histogram(c.spec, 64); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
}
