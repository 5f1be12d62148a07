package card

import (
	"bytes"
	"flag"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"onic/hdlgen/ir"
	"onic/pcie"
	"onic/pcie/pg213"
	"onic/pcie/rc"
	"onic/tlp"
)

// rcOps is how many reads and writes host A and host B each make in
// TestCardsUnderRootComplexes.
var rcOps = flag.Int("rc-ops", 24, "reads and writes each host makes in TestCardsUnderRootComplexes")

// TestCardsUnderRootComplexes: the two-party scenario's two generated
// cards, each behind the pcie/pg213 model of AMD's block and a root
// complex with memory written from the PCIe specification (pcie/rc, not
// the emulator's host), their port A lanes joined. Each host's CPU writes
// and reads the other host's memory through its O-NIC's window — 1 byte
// to 4 KiB at any alignment, many reads outstanding — under each MRRS
// from 128 to 4096 bytes, and reads its own O-NIC's registers (up to
// the whole MSI-X table, which the card answers in completions of at
// most MPS, split at MPS-aligned addresses). Every read
// crosses both cards and both root complexes, each of which routes
// completions by requester ID and checks each one against what its read
// still owes: every byte read is the one the other host's memory holds,
// every write lands, and neither root complex finds a TLP malformed, a
// completion unexpected or a read unanswered.
func TestCardsUnderRootComplexes(t *testing.T) {
	link := testLink(t)
	for _, mrrs := range []int{128, 512, 4096} {
		t.Run(fmt.Sprintf("mrrs-%d", mrrs), func(t *testing.T) {
			p := newPair(t, [2]*ir.Module{cardOf(t, "onic_card_a", withRegisters(config(t, 0)), link),
				cardOf(t, "onic_card_b", withRegisters(config(t, 1)), link)})
			p.setDelay(9)
			var hosts [2]*rc.RC
			for k := range hosts {
				h, err := rc.New(rc.Config{ID: tlp.NewID(0, 0, 0), Ports: []rc.Port{{Secondary: p.ids[k].Bus(), Subordinate: p.ids[k].Bus()}},
					MemBase: 1 << 32, MemSize: 1 << 30, MPS: 256, MRRS: mrrs, RCB: 64, Timeout: 20000})
				if err != nil {
					t.Fatal(err)
				}
				hosts[k] = h
			}
			r := rand.New(rand.NewPCG(uint64(mrrs), 9))
			// Each host's memory where the other's window reaches.
			for _, h := range hosts {
				for a := uint64(0); a < 64<<10; a += 4096 {
					b := make([]byte, 4096)
					for i := range b {
						b[i] = byte(r.Uint32())
					}
					h.Poke(1<<32+a, b)
				}
			}
			p.run("the link comes up", 5000, func() bool { return p.up(0) && p.up(1) })
			w := design(t, 0).Windows[0]
			winBase := bases[w.BAR] + w.Offset
			aperture := bits.Len64(onicFunction(t).BARs[w.BAR].Size) - 1
			send := func(k int, outs []rc.Out, bar, ap int) {
				for _, o := range outs {
					c, err := pg213.ToCQ(&o.TLP, bar, ap, 0)
					if err != nil {
						t.Fatal(err)
					}
					p.cq[k] = append(p.cq[k], beatsOf(append(c.Descriptor[:], c.Payload...), uint64(c.FirstBE)|uint64(c.LastBE)<<8)...)
				}
			}
			type pending struct {
				host int
				off  uint64 // in the far memory (or the register BAR)
				n    int
				regs bool
				want []byte // the memory read, when the read was made
			}
			reads := map[[2]int]pending{} // by host and read ID
			writes, overMPS := 0, 0
			// drain runs the cards until every read has finished, checking
			// each against the memory it read as it was when the read was
			// made.
			most := 0 // read requests outstanding at once, at the most
			drain := func() {
				for cyc := 0; len(reads) > 0; cyc++ {
					if cyc == 200000 {
						t.Fatalf("%d reads never finished (%+v, %+v)", len(reads), hosts[0].Counts, hosts[1].Counts)
					}
					step(p, hosts)
					most = max(most, hosts[0].Outstanding()+hosts[1].Outstanding())
					for k, h := range hosts {
						for _, d := range h.Done() {
							rd, ok := reads[[2]int{k, d.ID}]
							if !ok {
								t.Fatalf("host %d: read %d finished twice", k, d.ID)
							}
							delete(reads, [2]int{k, d.ID})
							if d.Status != tlp.StatusSC {
								t.Fatalf("host %d: read of %d bytes at +%#x: %v %s", k, rd.n, rd.off, d.Status, d.Err)
							}
							if rd.regs {
								if rd.off != 0 {
									continue // (the MSI-X table's contents are the register tests')
								}
								if id := uint32(d.Data[0]) | uint32(d.Data[1])<<8 | uint32(d.Data[2])<<16 | uint32(d.Data[3])<<24; id != 0x4F4E4943 {
									t.Fatalf("host %d: its O-NIC's ID register reads %#x", k, id)
								}
								continue
							}
							if !bytes.Equal(d.Data, rd.want) {
								t.Fatalf("host %d: read of %d bytes at +%#x: other bytes than host %d's memory holds", k, rd.n, rd.off, 1-k)
							}
						}
					}
				}
			}
			// What each host's CPU does, one operation a turn.
			for i := range 2 * *rcOps {
				k := i % 2
				n := 1 + r.IntN(4096)
				if r.IntN(3) == 0 {
					n = 1 + r.IntN(64)
				}
				off := uint64(r.IntN(64<<10 - n))
				switch op := i / 2 % 6; {
				case op == 0:
					drain() // (no read of the bytes it changes is outstanding)
					data := make([]byte, n)
					for j := range data {
						data[j] = byte(r.Uint32())
					}
					send(k, hosts[k].Write(0, winBase+off, data), w.BAR, aperture)
					writes++
					// Let it land before the next operation reads there.
					p.run("the write lands", 20000, func() bool { return len(p.cq[k]) == 0 })
					for range 600 {
						step(p, hosts)
					}
					if got := hosts[1-k].Peek(1<<32+off, n); !bytes.Equal(got, data) {
						t.Fatalf("host %d's write of %d bytes at +%#x: host %d's memory holds other bytes", k, n, off, 1-k)
					}
				case op < 4:
					id, outs, ok := hosts[k].Read(0, winBase+off, n)
					if !ok {
						t.Fatal("no tags")
					}
					reads[[2]int{k, id}] = pending{host: k, off: off, n: n, want: hosts[1-k].Peek(1<<32+off, n)}
					send(k, outs, w.BAR, aperture)
				default:
					// Its O-NIC's registers: from the ID register on, or
					// up to the whole MSI-X table (1 KiB, more than MPS)
					// at any alignment.
					rOff, rn := uint64(0), 4*(1+r.IntN(8))
					if r.IntN(2) == 0 {
						rn = 1 + r.IntN(16*pcie.ONICMSIXVectors)
						rOff = pcie.ONICMSIXTableOffset + uint64(r.IntN(16*pcie.ONICMSIXVectors-rn+1))
						if rn > 256 {
							overMPS++
						}
					}
					id, outs, ok := hosts[k].Read(0, bases[0]+rOff, rn)
					if !ok {
						t.Fatal("no tags")
					}
					reads[[2]int{k, id}] = pending{host: k, off: rOff, n: rn, regs: true}
					send(k, outs, 0, 16)
				}
				for range r.IntN(8) {
					step(p, hosts)
				}
			}
			drain()
			for k, h := range hosts {
				if h.Counts != (rc.Counts{}) || h.Outstanding() != 0 {
					t.Fatalf("host %d's root complex: %+v, %d outstanding", k, h.Counts, h.Outstanding())
				}
			}
			if overMPS == 0 {
				t.Fatal("no register read was longer than MPS")
			}
			if most < 8 {
				t.Fatalf("at most %d read requests were outstanding at once: the test does not load the cards", most)
			}
			t.Logf("MRRS %d: %d operations (%d writes), up to %d read requests outstanding, every byte right", mrrs, 2**rcOps, writes, most)
		})
	}
}

// step runs the cards a cycle and lets each host's root complex take what
// its card sent it: requests into its memory (answered on the card's RC
// interface, completions routed by ID) and completions of its CPU's
// reads.
func step(p *pair, hosts [2]*rc.RC) {
	p.cycle()
	for k, h := range hosts {
		h.Tick()
		for _, x := range p.rq[k] {
			for _, o := range h.Receive(0, &x) {
				c := o.TLP
				p.complete(k, &c, x.Address+uint64(c.LowerAddress&3))
			}
		}
		p.rq[k] = p.rq[k][:0]
		for _, c := range p.cc[k] {
			h.Receive(0, &c)
		}
		p.cc[k] = p.cc[k][:0]
	}
}
