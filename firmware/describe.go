package firmware

import (
	"fmt"
	"io"
	"strings"

	"onic/internal/linediff"
)

// Describe writes the image as text, one fact per line, in a fixed order:
// what onic fw inspect prints and onic fw diff compares.
func (im *Image) Describe(w io.Writer) {
	m := &im.Manifest
	fmt.Fprintf(w, "%s %s %s (format %d)\n", m.Kind, m.Name, m.Version, m.Format)
	fmt.Fprintf(w, "target     %s (%s)\n", m.Part, m.Family)
	fmt.Fprintf(w, "static     %s\n", m.Static)
	if m.Kind == KindImage {
		fmt.Fprintf(w, "security   version %d (static region)\n", m.SecurityVersion)
	}
	if m.Kind == KindImage {
		fmt.Fprintf(w, "manager    %d cycles at %g MHz, %d-bit data path\n", m.ManagerDepth, m.ClockMHz, m.DataWidth)
		fmt.Fprintf(w, "full       %d bytes%s\n", m.FullBytes, estimated(m.FullEstimated))
	}
	for _, s := range m.Slots {
		k := "empty"
		if s.Kernel != "" {
			k = fmt.Sprintf("%s %s (id %#08x, security version %d), needs %s (%s)", s.Kernel, s.KernelVersion, s.KernelID,
				s.SecurityVersion, res(s.Need), s.NeedSource)
		}
		fmt.Fprintf(w, "slot %d     %s\n", s.Slot, k)
		fmt.Fprintf(w, "slot %d     region %s, partial bitstream %d bytes%s\n", s.Slot, res(s.Region), s.Bytes, estimated(s.Estimated))
	}
	for _, t := range m.Tenants {
		fmt.Fprintf(w, "tenant     %s may load slots %v\n", t.Name, t.Slots)
	}
	for _, p := range m.Payloads {
		where := "static"
		if p.Slot >= 0 {
			where = fmt.Sprintf("slot %d", p.Slot)
		}
		fmt.Fprintf(w, "payload    %-40s %-9s %-7s %8d bytes sha256 %x\n", p.Name, p.Kind, where, p.Size, p.SHA256)
	}
	if len(im.Signatures) == 0 {
		fmt.Fprintln(w, "signature  none")
	}
	for _, s := range im.Signatures {
		ok := "verifies"
		if _, err := (&Image{raw: im.raw, Signatures: []Signature{s}}).Signers(); err != nil {
			ok = "DOES NOT VERIFY"
		}
		fmt.Fprintf(w, "signature  key %s: %s\n", keyName(s.Key), ok)
	}
}

func res(r Resources) string {
	return fmt.Sprintf("lut %d ff %d bram %d dsp %d", r.LUT, r.FF, r.BRAM, r.DSP)
}

func estimated(e bool) string {
	if e {
		return " (estimated from the part)"
	}
	return " (attached bitstream)"
}

// Diff is what changed from image a to image b: the lines of their
// descriptions that differ, "-" for a's and "+" for b's, in order; empty
// when they describe the same.
func Diff(a, b *Image) string {
	var x, y strings.Builder
	a.Describe(&x)
	b.Describe(&y)
	return linediff.Changes(x.String(), y.String())
}

// keyName is a signature's key as KeyID, or its length when it is not a
// key at all.
func keyName(k []byte) string {
	if len(k) != 32 {
		return fmt.Sprintf("(%d bytes, not an ed25519 key)", len(k))
	}
	return KeyID(k)
}
