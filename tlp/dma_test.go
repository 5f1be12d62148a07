package tlp

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// enabledBytes lists the byte addresses a memory request's byte enables
// select.
func enabledBytes(addr uint64, lengthDW uint16, first, last uint8) []uint64 {
	var out []uint64
	for dw := 0; dw < int(lengthDW); dw++ {
		be := uint8(0xF)
		switch {
		case dw == 0:
			be = first
		case dw == int(lengthDW)-1:
			be = last
		}
		for i := 0; i < 4; i++ {
			if be>>i&1 == 1 {
				out = append(out, addr&^3+uint64(dw*4+i))
			}
		}
	}
	return out
}

func TestSplitRequestTable(t *testing.T) {
	for _, tc := range []struct {
		addr      uint64
		size, max int
		want      []Chunk
	}{
		{0x1000, 256, 256, []Chunk{{0x1000, 0, 256, 64, 0xF, 0xF}}},
		{0x1000, 512, 256, []Chunk{{0x1000, 0, 256, 64, 0xF, 0xF}, {0x1100, 256, 256, 64, 0xF, 0xF}}},
		{0x1003, 2, 256, []Chunk{{0x1003, 0, 2, 2, 0x8, 0x1}}},
		{0x1001, 2, 256, []Chunk{{0x1001, 0, 2, 1, 0x6, 0}}},
		{0x10F0, 0x20, 256, []Chunk{{0x10F0, 0, 0x10, 4, 0xF, 0xF}, {0x1100, 0x10, 0x10, 4, 0xF, 0xF}}},
		{0x1FFE, 4, 4096, []Chunk{{0x1FFE, 0, 2, 1, 0xC, 0}, {0x2000, 2, 2, 1, 0x3, 0}}},
		{0x2000, 0, 512, []Chunk{{0x2000, 0, 0, 1, 0, 0}}},
	} {
		var got []Chunk
		for c := range Chunks(tc.addr, tc.size, tc.max) {
			got = append(got, c)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("Chunks(%#x, %d, %d)\n got %v\nwant %v", tc.addr, tc.size, tc.max, got, tc.want)
		}
	}
}

// TestDMAProperties splits random transfers into TLPs and checks every TLP
// validates, respects the size limit, and that the byte enables select
// exactly the transfer's bytes, in order.
func TestDMAProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{128, 256, 512, 1024, 2048, 4096}
	for i := 0; i < 3000; i++ {
		addr := r.Uint64N(1 << 34)
		if i%3 == 0 {
			addr = 0x1000 - uint64(r.IntN(64)) // straddle 4 KB
		}
		size := r.IntN(9000)
		max := sizes[r.IntN(len(sizes))]
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		writes, err := AppendWrites(nil, NewID(1, 0, 0), 7, addr, data, max)
		if err != nil {
			t.Fatal(err)
		}
		reads, err := AppendReads(nil, NewID(1, 0, 0), 1020, addr, size, max)
		if err != nil {
			t.Fatal(err)
		}
		if len(writes) != len(reads) {
			t.Fatalf("writes and reads split differently: %d vs %d", len(writes), len(reads))
		}
		var got []byte
		next := addr
		for j := range writes {
			w, rd := &writes[j], &reads[j]
			for _, x := range []*TLP{w, rd} {
				if err := x.Validate(); err != nil {
					t.Fatalf("addr %#x size %d max %d: TLP %d: %v (%v)", addr, size, max, j, err, x)
				}
				if int(x.Length)*4 > max {
					t.Fatalf("TLP of %d DW exceeds %d bytes", x.Length, max)
				}
			}
			if rd.Tag != uint16(1020+j)%1024 {
				t.Fatalf("read %d has tag %d", j, rd.Tag)
			}
			for _, a := range enabledBytes(w.Address, w.Length, w.FirstBE, w.LastBE) {
				if a != next {
					t.Fatalf("addr %#x size %d: enabled byte %#x, want %#x", addr, size, a, next)
				}
				next++
				got = append(got, w.Data[a-w.Address])
			}
			if fmt.Sprint(enabledBytes(rd.Address, rd.Length, rd.FirstBE, rd.LastBE)) !=
				fmt.Sprint(enabledBytes(w.Address, w.Length, w.FirstBE, w.LastBE)) {
				t.Fatalf("read %d enables different bytes from write %d", j, j)
			}
			// Every request but the first starts max-aligned.
			if j > 0 && w.Address%uint64(max) != 0 {
				t.Fatalf("request %d at %#x is not %d-aligned", j, w.Address, max)
			}
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("addr %#x size %d: the writes carry different bytes", addr, size)
		}
	}
}

func TestReadByteCountTable(t *testing.T) {
	// Tables 2-40 and 2-41 of the specification, for 1 DW reads.
	for _, tc := range []struct {
		first uint8
		bc    int
		la    uint8
	}{
		{0b1001, 4, 0}, {0b1111, 4, 0}, {0b1011, 4, 0}, {0b0101, 3, 0}, {0b0111, 3, 0},
		{0b1010, 3, 1}, {0b1110, 3, 1}, {0b0011, 2, 0}, {0b0110, 2, 1}, {0b1100, 2, 2},
		{0b0001, 1, 0}, {0b0010, 1, 1}, {0b0100, 1, 2}, {0b1000, 1, 3}, {0b0000, 1, 0},
	} {
		bc, la := ReadByteCount(0x1040, 1, tc.first, 0)
		if bc != tc.bc || la != 0x40|tc.la {
			t.Errorf("first BE %04b: byte count %d lower address %#x, want %d %#x", tc.first, bc, la, tc.bc, 0x40|tc.la)
		}
	}
	// Multi-DW: Length*4 minus the disabled leading and trailing bytes.
	for _, tc := range []struct {
		first, last uint8
		bc          int
	}{{0xF, 0xF, 16}, {0xE, 0xF, 15}, {0x8, 0x1, 10}, {0xC, 0x7, 13}} {
		if bc, _ := ReadByteCount(0x1000, 4, tc.first, tc.last); bc != tc.bc {
			t.Errorf("4 DW %04b/%04b: byte count %d, want %d", tc.first, tc.last, bc, tc.bc)
		}
	}
}

// TestCompletionProperties answers random reads and checks that each
// completion validates, respects MPS and RCB, and that the completions
// together return exactly the requested bytes.
func TestCompletionProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 3000; i++ {
		addr := r.Uint64N(1 << 33)
		size := 1 + r.IntN(4096)
		mrrs := []int{128, 512, 4096}[r.IntN(3)]
		mps := []int{128, 256, 512}[r.IntN(3)]
		rcb := []int{64, 128}[r.IntN(2)]
		reads, err := AppendReads(nil, NewID(0, 0, 0), 0, addr, size, mrrs)
		if err != nil {
			t.Fatal(err)
		}
		for _, rd := range reads {
			data := make([]byte, int(rd.Length)*4)
			for j := range data {
				data[j] = byte(j*7 + 1)
			}
			cpls, err := AppendCompletions(nil, &rd, NewID(1, 0, 0), data, rcb, mps)
			if err != nil {
				t.Fatal(err)
			}
			want := enabledBytes(rd.Address, rd.Length, rd.FirstBE, rd.LastBE)
			bc, _ := ReadByteCount(rd.Address, rd.Length, rd.FirstBE, rd.LastBE)
			returned := 0
			for j, c := range cpls {
				if err := c.Validate(); err != nil {
					t.Fatalf("read %v: completion %d: %v (%v)", &rd, j, err, &c)
				}
				if int(c.Length)*4 > mps {
					t.Fatalf("completion of %d DW exceeds MPS %d", c.Length, mps)
				}
				if int(c.ByteCount) != bc-returned {
					t.Fatalf("completion %d byte count %d, want %d", j, c.ByteCount, bc-returned)
				}
				if j > 0 && c.LowerAddress%uint8(rcb) != 0 && c.LowerAddress != 0 {
					t.Fatalf("completion %d starts at lower address %#x, not RCB %d aligned", j, c.LowerAddress, rcb)
				}
				n := min(int(c.ByteCount), int(c.Length)*4-int(c.LowerAddress&3))
				first := int(c.LowerAddress & 3)
				for k := 0; k < n; k++ {
					a := want[returned+k]
					if got := c.Data[first+k]; got != data[a-rd.Address] {
						t.Fatalf("completion %d byte %d = %#x, want %#x", j, k, got, data[a-rd.Address])
					}
				}
				returned += n
			}
			if returned != bc {
				t.Fatalf("completions returned %d bytes of %d", returned, bc)
			}
		}
	}
}

func TestAppendCompletionsRejects(t *testing.T) {
	rd := TLP{Fmt: Fmt3DW, Length: 2, FirstBE: 0xF, LastBE: 0xF, Address: 0x1000}
	wr := TLP{Fmt: Fmt3DWData, Length: 1, FirstBE: 0xF, Address: 0x1000, Data: make([]byte, 4)}
	for name, f := range map[string]func() error{
		"write":    func() error { _, err := AppendCompletions(nil, &wr, 0, make([]byte, 4), 64, 256); return err },
		"rcb 32":   func() error { _, err := AppendCompletions(nil, &rd, 0, make([]byte, 8), 32, 256); return err },
		"mps 100":  func() error { _, err := AppendCompletions(nil, &rd, 0, make([]byte, 8), 64, 100); return err },
		"data len": func() error { _, err := AppendCompletions(nil, &rd, 0, make([]byte, 4), 64, 256); return err },
		"mrrs":     func() error { _, err := AppendReads(nil, 0, 0, 0, 10, 8192); return err },
		"mps w":    func() error { _, err := AppendWrites(nil, 0, 0, 0, nil, 64); return err },
	} {
		if f() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestWireSize(t *testing.T) {
	for _, tc := range []struct {
		t    TLP
		want int
	}{
		{TLP{Fmt: Fmt4DWData, Length: 64, Data: make([]byte, 256)}, 256 + 16 + 8},
		{TLP{Fmt: Fmt4DW, Length: 64}, 24},
		{TLP{Fmt: Fmt3DW, Length: 64}, 20},
		{TLP{Fmt: Fmt3DWData, Type: 0xA, Length: 32, Data: make([]byte, 128)}, 128 + 20},
		{TLP{Fmt: Fmt3DWData, Length: 1, TD: true, Data: make([]byte, 4)}, 4 + 12 + 4 + 8},
	} {
		for g := Gen1; g <= Gen5; g++ {
			if got, err := tc.t.WireSize(g); err != nil || got != tc.want {
				t.Errorf("%v Gen%d: %d, %v; want %d", tc.t.Kind(), g, got, err, tc.want)
			}
		}
	}
	if _, err := (&TLP{}).WireSize(6); err == nil {
		t.Error("Gen6 accepted")
	}
}
