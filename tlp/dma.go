package tlp

import "fmt"

// Chunk is one memory request of a split DMA transfer: Size bytes at Addr,
// Offset bytes into the transfer, carried in LengthDW DWs with the given
// byte enables.
type Chunk struct {
	Addr     uint64
	Offset   int
	Size     int
	LengthDW uint16
	FirstBE  uint8
	LastBE   uint8
}

// byteEnables returns the Length and First/Last DW Byte Enables that cover
// size bytes at addr. size 0 gives the zero-length form (1 DW, no bytes).
func byteEnables(addr uint64, size int) (lengthDW uint16, first, last uint8) {
	if size == 0 {
		return 1, 0, 0
	}
	start := int(addr & 3)
	end := start + size // exclusive, relative to the first DW
	n := (end + 3) / 4
	first = 0xF << start & 0xF
	lastMask := uint8(0xF >> (3 - (end-1)&3))
	if n == 1 {
		return 1, first & lastMask, 0
	}
	return uint16(n), first, lastMask
}

// SplitRequest returns the first request of a transfer of size bytes at
// addr, offset bytes into the transfer, when no request may carry more than
// max bytes (MPS for writes, MRRS for reads; a power of two from 128 to
// 4096). Requests end on max-aligned boundaries, so none crosses a 4 KB
// boundary and all but the first start aligned. Loop until the remaining
// size is zero; Chunks does that for you. A size of 0 gives one zero-length
// request.
func SplitRequest(addr uint64, offset, size, max int) Chunk {
	end := addr + uint64(size)
	if lim := addr&^uint64(max-1) + uint64(max); size > 0 && end > lim {
		end = lim
	}
	n := int(end - addr)
	l, f, la := byteEnables(addr, n)
	return Chunk{Addr: addr, Offset: offset, Size: n, LengthDW: l, FirstBE: f, LastBE: la}
}

// Chunks calls yield for each request of a size-byte transfer at addr under
// a request size limit of max bytes (see SplitRequest). It does not allocate
// and is meant for range-over-func.
func Chunks(addr uint64, size, max int) func(yield func(Chunk) bool) {
	return func(yield func(Chunk) bool) {
		off := 0
		for {
			c := SplitRequest(addr, off, size, max)
			if !yield(c) {
				return
			}
			addr += uint64(c.Size)
			off += c.Size
			size -= c.Size
			if size <= 0 {
				return
			}
		}
	}
}

// CheckSize returns an error unless v is a power of two between 128 and
// 4096 bytes, the values MPS and MRRS may take; name appears in the error.
func CheckSize(name string, v int) error {
	if v < 128 || v > 4096 || v&(v-1) != 0 {
		return fmt.Errorf("%s %d: must be a power of two from 128 to 4096 bytes", name, v)
	}
	return nil
}

// AppendWrites appends the MWr TLPs of a DMA write of data to addr under
// mps. Each TLP's Data is a sub-slice of a DW-aligned copy of data that
// AppendWrites allocates once; tag is the same for all (posted writes do
// not need distinct tags). Addresses of 4 GB and above use 4 DW headers.
func AppendWrites(dst []TLP, requester ID, tag uint16, addr uint64, data []byte, mps int) ([]TLP, error) {
	if err := CheckSize("MPS", mps); err != nil {
		return dst, err
	}
	// Stage the data DW-aligned: each TLP's payload covers whole DWs, with
	// the bytes outside the byte enables left zero.
	lead := int(addr & 3)
	buf := make([]byte, (lead+len(data)+3)&^3)
	copy(buf[lead:], data)
	for c := range Chunks(addr, len(data), mps) {
		a := c.Addr &^ 3
		off := int(a - addr&^3)
		t := TLP{Tag: tag, RequesterID: requester, Length: c.LengthDW, FirstBE: c.FirstBE, LastBE: c.LastBE, Address: a}
		t.Fmt, t.Type, _ = FmtType(MWr, a >= 1<<32, 0)
		if len(data) == 0 {
			t.Data = make([]byte, 4)
		} else {
			t.Data = buf[off : off+int(c.LengthDW)*4]
		}
		dst = append(dst, t)
	}
	return dst, nil
}

// AppendReads appends the MRd TLPs of a DMA read of size bytes at addr under
// mrrs, with tags firstTag, firstTag+1, ... (mod 1024).
func AppendReads(dst []TLP, requester ID, firstTag uint16, addr uint64, size, mrrs int) ([]TLP, error) {
	if err := CheckSize("MRRS", mrrs); err != nil {
		return dst, err
	}
	tag := firstTag
	for c := range Chunks(addr, size, mrrs) {
		a := c.Addr &^ 3
		t := TLP{Tag: tag & 1023, RequesterID: requester, Length: c.LengthDW, FirstBE: c.FirstBE, LastBE: c.LastBE, Address: a}
		t.Fmt, t.Type, _ = FmtType(MRd, a >= 1<<32, 0)
		dst = append(dst, t)
		tag++
	}
	return dst, nil
}

// ReadByteCount returns the number of bytes a memory read returns and the
// lower address (bits 6:0) of its first enabled byte, from its address,
// Length and byte enables (§2.2.9, Tables 2-40 and 2-41). A zero-length read
// (Length 1, First DW BE 0000b) returns a byte count of 1.
func ReadByteCount(addr uint64, lengthDW uint16, firstBE, lastBE uint8) (byteCount int, lowerAddr uint8) {
	lead := leadingDisabled(firstBE)
	lowerAddr = uint8(addr&0x7C) | uint8(lead&3)
	if lengthDW == 1 {
		if firstBE == 0 {
			return 1, uint8(addr & 0x7C)
		}
		hi := 3
		for firstBE>>hi&1 == 0 {
			hi--
		}
		return hi - lead + 1, lowerAddr
	}
	trail := 0
	for lastBE<<trail&8 == 0 && trail < 4 {
		trail++
	}
	return int(lengthDW)*4 - lead - trail, lowerAddr
}

func leadingDisabled(be uint8) int {
	n := 0
	for n < 4 && be>>n&1 == 0 {
		n++
	}
	if n == 4 {
		return 0
	}
	return n
}

// CplChunk is one completion of a read: LengthDW DWs starting Offset bytes
// into the read's DW-aligned data, with the Byte Count still to be returned
// and the Lower Address of its first byte.
type CplChunk struct {
	Offset       int
	LengthDW     uint16
	ByteCount    uint16
	LowerAddress uint8
}

// Completions calls yield for each completion a completer returns for a
// memory read of lengthDW DWs at DW-aligned address addr with the given byte
// enables: split only at rcb-aligned addresses (rcb 64 or 128) and never
// carrying more than mps bytes (§2.3.1.1). Each completion is as large as
// those limits allow. It does not allocate.
func Completions(addr uint64, lengthDW uint16, firstBE, lastBE uint8, rcb, mps int) func(yield func(CplChunk) bool) {
	return func(yield func(CplChunk) bool) {
		remaining, la := ReadByteCount(addr, lengthDW, firstBE, lastBE)
		start := addr &^ 3
		end := start + uint64(lengthDW)*4
		off := 0
		for cur := start; cur < end; {
			lim := (cur + uint64(mps)) &^ uint64(rcb-1)
			if lim <= cur { // cannot happen for mps >= rcb; keep progress
				lim = cur + uint64(rcb)
			}
			next := min(end, lim)
			n := uint16((next - cur) / 4)
			c := CplChunk{Offset: off, LengthDW: n, ByteCount: uint16(remaining), LowerAddress: la}
			if !yield(c) {
				return
			}
			// The next completion's first byte is at next; subtract the
			// bytes this one returned.
			carried := int(next-cur) - int(la&3)
			remaining -= carried
			off += int(next - cur)
			cur = next
			la = uint8(next & 0x7F)
		}
	}
}

// AppendCompletions appends the CplD TLPs answering the memory read req
// with data, the read's DW-aligned payload (req.Length*4 bytes). Each TLP's
// Data is a sub-slice of data; nothing is copied. It returns an error if req
// is not a memory read, data has the wrong size, or rcb/mps are invalid.
func AppendCompletions(dst []TLP, req *TLP, completer ID, data []byte, rcb, mps int) ([]TLP, error) {
	k := req.Kind()
	if k != MRd && k != MRdLk {
		return dst, fmt.Errorf("completions answer a memory read, not %s", k)
	}
	if rcb != 64 && rcb != 128 {
		return dst, fmt.Errorf("RCB %d: must be 64 or 128 bytes", rcb)
	}
	if err := CheckSize("MPS", mps); err != nil {
		return dst, err
	}
	if len(data) != int(req.Length)*4 {
		return dst, fmt.Errorf("read of %d DW needs %d data bytes, have %d", req.Length, int(req.Length)*4, len(data))
	}
	kind := CplD
	if k == MRdLk {
		kind = CplDLk
	}
	f, typ, _ := FmtType(kind, false, 0)
	for c := range Completions(req.Address, req.Length, req.FirstBE, req.LastBE, rcb, mps) {
		dst = append(dst, TLP{
			Fmt: f, Type: typ, TC: req.TC, Attr: req.Attr, Tag: req.Tag,
			Length: c.LengthDW, CompleterID: completer, RequesterID: req.RequesterID,
			Status: StatusSC, ByteCount: c.ByteCount, LowerAddress: c.LowerAddress,
			Data: data[c.Offset : c.Offset+int(c.LengthDW)*4],
		})
	}
	return dst, nil
}
