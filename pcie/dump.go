package pcie

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"onic/tlp"
)

// WriteLspci writes the configuration space of f, at routing ID id, in the
// text format of `lspci -xxxx`: a device line, then 16 bytes per line with
// the offset in hex. `lspci -F FILE` reads it back. Lines starting with
// "# " carry what a dump cannot (each BAR's size) and are ignored by lspci.
func WriteLspci(w io.Writer, id tlp.ID, f *Function) error {
	bw := bufio.NewWriter(w)
	class := uint32(f.Space.Read8(0x0B))<<8 | uint32(f.Space.Read8(0x0A))
	fmt.Fprintf(bw, "%s Class [%04x]: Device [%04x:%04x] (%s)\n", id, class, f.Space.Read16(0), f.Space.Read16(2), f.Name)
	n := 6
	if f.Bridge {
		n = 2
	}
	for i := 0; i < n; i++ {
		b := f.BARs[i]
		if b.Kind == BARNone {
			continue
		}
		pf := ""
		if b.Prefetchable {
			pf = " prefetchable"
		}
		fmt.Fprintf(bw, "# BAR%d %s%s size %#x at %#x\n", i, b.Kind, pf, b.Size, f.BARAddress(i))
	}
	for off := 0; off < SpaceSize; off += 16 {
		if off < 0x100 {
			fmt.Fprintf(bw, "%02x:", off)
		} else {
			fmt.Fprintf(bw, "%03x:", off)
		}
		for i := 0; i < 16; i++ {
			fmt.Fprintf(bw, " %02x", f.Space.b[off+i])
		}
		bw.WriteByte('\n')
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

// Dumped is one function read back from an lspci-format dump.
type Dumped struct {
	ID    tlp.ID
	Bytes [SpaceSize]byte
	Len   int // bytes present in the dump (256 or 4096 usually)
}

// ReadLspci parses the output of `lspci -x`, `-xxx` or `-xxxx` (or of
// WriteLspci): device lines "bb:dd.f ..." followed by hex lines. Bytes not
// in the dump read as 0xff, as lspci treats them. Malformed lines are
// errors naming the line.
func ReadLspci(r io.Reader) ([]Dumped, error) {
	var out []Dumped
	sc := bufio.NewScanner(r)
	line := 0
	var cur *Dumped
	for sc.Scan() {
		line++
		t := strings.TrimRight(sc.Text(), "\r")
		switch {
		case t == "":
			cur = nil
		case strings.HasPrefix(t, "#"):
		case len(t) >= 8 && t[2] == ':' && t[5] == '.' && t[7] == ' ':
			id, err := tlp.ParseID(t[:7])
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			out = append(out, Dumped{ID: id})
			cur = &out[len(out)-1]
			for i := range cur.Bytes {
				cur.Bytes[i] = 0xFF
			}
		default:
			colon := strings.IndexByte(t, ':')
			if cur == nil || colon < 2 {
				return nil, fmt.Errorf("line %d: %q is neither a device line nor a hex line", line, t)
			}
			off, err := strconv.ParseUint(t[:colon], 16, 16)
			if err != nil {
				return nil, fmt.Errorf("line %d: bad offset %q", line, t[:colon])
			}
			for _, h := range strings.Fields(t[colon+1:]) {
				v, err := strconv.ParseUint(h, 16, 8)
				if err != nil || len(h) != 2 {
					return nil, fmt.Errorf("line %d: %q is not a hex byte", line, h)
				}
				if off >= SpaceSize {
					return nil, fmt.Errorf("line %d: offset %#x is past the 4 KB configuration space", line, off)
				}
				cur.Bytes[off] = byte(v)
				off++
				cur.Len = max(cur.Len, int(off))
			}
		}
	}
	return out, sc.Err()
}
