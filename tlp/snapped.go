package tlp

// SnappedSize reports whether b is exactly the prefixes and header of a
// TLP whose whole size, which it returns, is larger: a TLP snapped to its
// header, as DecodeSnapped takes it (a capture record cut at the header).
func SnappedSize(b []byte) (size int, ok bool) {
	size, err := Size(b)
	if err != nil || size <= len(b) {
		return size, false
	}
	off := 0
	for Fmt(b[off]>>5) == FmtPrefix { // (Size found the header after them)
		off += 4
	}
	h := Header(b[off:])
	cut := 0
	if h.Fmt().HasData() {
		cut = int(h.Length()) * 4
	}
	if h.TD() {
		cut += 4
	}
	return size, len(b) == size-cut
}
