// Package pcap reads and writes onic's TLP captures — classic pcap and
// pcapng (an interface per tap) on LINKTYPE_USER0, each record a 4-byte
// pseudo-header (TapHeader) and one TLP — and makes TLPs a gopacket
// layer (Layer, Tap, LinkTypeONIC). It is apart from package tlp so that
// the codec has no third-party imports; importing pcap registers the
// link type with gopacket. docs/pcap.md describes the format.
package pcap
