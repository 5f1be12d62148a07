// Package lanes describes how an O-NIC's optical port carries its link
// over transceiver lanes: a lane plan (how many lanes, at what line
// rate, 64b/66b coded) and what it means for the link layer's 512-bit
// words — how long a word takes on the fibre, the data rate, and which
// cycles of the card's user clock the transceiver wrapper takes a word
// in. The emulator's optical links (emu/link), the card's RTL tests and
// simulation (designs/cardsim) and the Vivado script's transceiver IP
// (designs/bundle) all take their figures from here, so that they agree
// for every plan (docs/hdl.md, "Lane plans").
//
// A word is eight 64-bit blocks; each block goes on a lane as a 66-bit
// 64b/66b block (IEEE 802.3 clause 49), so a word is 528 line bits
// whatever the plan. With 16 lanes two words go side by side (even
// words on lanes 0-7, odd on 8-15); with 8 a word's blocks go one a
// lane; with 4, 2 or 1 a lane carries 2, 4 or 8 of a word's blocks in
// turn.
package lanes

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// WordLineBits is a 512-bit word on the line: eight 66-bit blocks.
const WordLineBits = 8 * 66

// Line rates a lane may have, in Gb/s: the UltraScale+ GTY transceiver's
// range (AMD DS923, "GTY Transceiver Switching Characteristics": FGTYMIN
// 0.5 Gb/s, FGTYMAX 32.75 Gb/s in the -3 speed grade; 28.21 Gb/s in -2
// and -2L, 25.785 in -1). A board's part may allow less; its preset
// says.
const (
	MinGbps = 0.5
	MaxGbps = 32.75
)

// Plan is an optical port's lane plan: Lanes lanes, each at a line rate
// of KbpsPerLane kb/s (64b/66b coded, so 64/66 of it is data). The zero
// Plan is not valid; Default is FLEET's.
type Plan struct {
	Lanes       int
	KbpsPerLane int64
}

// Default is FLEET's plan: 16 lanes, one wavelength each, carrying a
// PCIe Gen3 x16 link's 8 Gb/s a lane — 8.25 Gb/s on the line with
// 64b/66b, so a 512-bit word every 4 ns, the card's 250 MHz user clock.
var Default = Plan{Lanes: 16, KbpsPerLane: 8_250_000}

// Presets are the plans documented and tested for every board and the
// emulator: FLEET's, two lanes' worth on eight lanes, and the 100G
// optics' 4 × 25.78125 Gb/s (100GBASE-SR4/LR4 lane rate, what a QSFP28
// cage carries) and 4 × 28 Gb/s (the GTY's -2 grade limit, 28.21, with
// a little margin).
var Presets = []Plan{Default, {8, 16_500_000}, {4, 25_781_250}, {4, 28_000_000}}

// Parse reads a plan written LANESxRATE with the rate's unit, as
// "16x8.25Gbps" or "4x25.78125Gbps" (the unit may be Gbps or Gb/s; the
// rate may have up to six decimals), and checks it.
func Parse(s string) (Plan, error) {
	n, rate, ok := strings.Cut(strings.TrimSpace(s), "x")
	if !ok {
		return Plan{}, fmt.Errorf("lane plan %q: want LANESxRATE with a unit, as 16x8.25Gbps", s)
	}
	num, unitOK := strings.CutSuffix(rate, "Gbps")
	if !unitOK {
		num, unitOK = strings.CutSuffix(rate, "Gb/s")
	}
	if !unitOK {
		return Plan{}, fmt.Errorf("lane plan %q: the lane rate needs its unit, Gbps (as 16x8.25Gbps)", s)
	}
	lanes, err := strconv.Atoi(n)
	if err != nil {
		return Plan{}, fmt.Errorf("lane plan %q: lanes %q is not a whole number", s, n)
	}
	kbps, err := parseGbps(num)
	if err != nil {
		return Plan{}, fmt.Errorf("lane plan %q: %v", s, err)
	}
	p := Plan{Lanes: lanes, KbpsPerLane: kbps}
	if err := p.Check(); err != nil {
		return Plan{}, fmt.Errorf("lane plan %q: %v", s, err)
	}
	return p, nil
}

// parseGbps reads a decimal number of Gb/s with at most six decimals
// into kb/s exactly.
func parseGbps(s string) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 6 || strings.ContainsAny(whole+frac, "+-eE") {
		return 0, fmt.Errorf("lane rate %q: want a decimal number of Gb/s with at most six decimals", s)
	}
	w, err := strconv.ParseInt(whole, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("lane rate %q: want a decimal number of Gb/s", s)
	}
	f := int64(0)
	if frac != "" {
		if f, err = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 32); err != nil {
			return 0, fmt.Errorf("lane rate %q: want a decimal number of Gb/s", s)
		}
	}
	return w*1_000_000 + f, nil
}

// Check reports whether p is a plan a port can have: 1, 2, 4, 8 or 16
// lanes (a word's eight blocks spread evenly, or two words side by side
// on 16), each at MinGbps to MaxGbps.
func (p Plan) Check() error {
	switch p.Lanes {
	case 1, 2, 4, 8, 16:
	default:
		return fmt.Errorf("lanes %d must be 1, 2, 4, 8 or 16", p.Lanes)
	}
	if g := p.LaneGbps(); !(g >= MinGbps && g <= MaxGbps) {
		return fmt.Errorf("lane rate %gGbps must be %g to %gGbps (the GTY's range, AMD DS923)", g, MinGbps, MaxGbps)
	}
	return nil
}

// String writes p as Parse reads it: "16x8.25Gbps".
func (p Plan) String() string {
	return fmt.Sprintf("%dx%sGbps", p.Lanes, strconv.FormatFloat(p.LaneGbps(), 'f', -1, 64))
}

// LaneGbps is a lane's line rate in Gb/s.
func (p Plan) LaneGbps() float64 { return float64(p.KbpsPerLane) / 1e6 }

// LineGbps is the line rate of all lanes together, in Gb/s.
func (p Plan) LineGbps() float64 { return float64(p.Lanes) * p.LaneGbps() }

// DataGbps is what the plan carries of the link layer's words, in Gb/s:
// 64/66 of the line rate.
func (p Plan) DataGbps() float64 { return p.LineGbps() * 64 / 66 }

// lineKbps is the line rate of all lanes in kb/s, the unit the exact
// arithmetic below uses.
func (p Plan) lineKbps() int64 { return int64(p.Lanes) * p.KbpsPerLane }

// WordPS is how long one 512-bit word takes on the fibre at the plan's
// rate, in picoseconds (528 line bits over all lanes): 4000 for
// Default.
func (p Plan) WordPS() float64 { return WordLineBits * 1e9 / float64(p.lineKbps()) }

// WordPS64 is the time between words the link layer sends and receives
// on a card whose user clock runs at clockMHz, 64 times in picoseconds
// (rounded to the nearest 1/64 ps): the plan's word time, or the clock's
// period when the plan is faster than one word a cycle (the link layer
// takes at most a word a cycle; the wrapper fills the rest of the line
// with idle blocks).
func (p Plan) WordPS64(clockMHz float64) int64 {
	word := math.Round(WordLineBits * 64e9 / float64(p.lineKbps()))
	clock := math.Round(64e6 / clockMHz)
	return int64(max(word, clock))
}

// Pacer says in which cycles of a card's user clock a transceiver
// wrapper on plan p takes a word from the link layer (its tx_ready):
// the gearbox between the link's words and the lanes' blocks takes a
// word each time the line has sent one word's worth of bits, so over
// any long run it takes words at the plan's word rate, never two in one
// cycle, and its pauses are spread as evenly as whole cycles allow.
type Pacer struct {
	perCycle int64 // line bits sent per cycle, times 1e9 (ps times kb/s)
	acc      int64
}

// wordUnits is a word's 528 line bits in the pacer's unit.
const wordUnits = WordLineBits * 1_000_000_000

// NewPacer returns the pacer of plan p on a user clock of clockMHz. The
// first word is taken in the first cycle.
func (p Plan) NewPacer(clockMHz float64) *Pacer {
	ps := int64(math.Round(1e6 / clockMHz))
	return &Pacer{perCycle: ps * p.lineKbps(), acc: wordUnits}
}

// Ready reports whether the wrapper takes a word this cycle, and moves
// the pacer on a cycle. A pause holds no bits back: the wrapper's
// gearbox sends what it holds while the link layer waits.
func (c *Pacer) Ready() bool {
	ready := c.acc >= wordUnits
	if ready {
		c.acc -= wordUnits
	}
	// The line runs on whether or not a word was taken, but the gearbox
	// never holds more than a word ahead.
	c.acc = min(c.acc+c.perCycle, wordUnits+c.perCycle)
	return ready
}
