package tlp

// Fmt is the 3-bit Fmt field of a TLP header (byte 0, bits 7:5). Bit 0
// selects a 4 DW header, bit 1 says a data payload follows, and the value
// 100b marks a TLP prefix instead of a header.
type Fmt uint8

// The Fmt encodings of PCIe Base Specification 5.0 §2.2.1.
const (
	Fmt3DW     Fmt = 0b000 // 3 DW header, no data
	Fmt4DW     Fmt = 0b001 // 4 DW header, no data
	Fmt3DWData Fmt = 0b010 // 3 DW header, with data
	Fmt4DWData Fmt = 0b011 // 4 DW header, with data
	FmtPrefix  Fmt = 0b100 // TLP prefix
)

// Is4DW reports whether the header is four DWs long.
func (f Fmt) Is4DW() bool { return f&1 != 0 }

// HasData reports whether the TLP carries a data payload.
func (f Fmt) HasData() bool { return f&2 != 0 }

// HeaderLen is the header length in bytes (12 or 16).
func (f Fmt) HeaderLen() int { return 12 + 4*int(f&1) }

// Kind names a TLP by its spec mnemonic. It is derived from Fmt and Type.
type Kind uint8

// The TLP kinds of the PCIe Base Specification 5.0 transaction layer
// (Table 2-3). Fmt/Type combinations outside this list are reserved.
const (
	KindInvalid Kind = iota
	MRd
	MRdLk
	MWr
	IORd
	IOWr
	CfgRd0
	CfgWr0
	CfgRd1
	CfgWr1
	Msg
	MsgD
	Cpl
	CplD
	CplLk
	CplDLk
	FetchAdd
	Swap
	CAS
	numKinds
)

var kindNames = [numKinds]string{
	KindInvalid: "invalid",
	MRd:         "MRd", MRdLk: "MRdLk", MWr: "MWr",
	IORd: "IORd", IOWr: "IOWr",
	CfgRd0: "CfgRd0", CfgWr0: "CfgWr0", CfgRd1: "CfgRd1", CfgWr1: "CfgWr1",
	Msg: "Msg", MsgD: "MsgD",
	Cpl: "Cpl", CplD: "CplD", CplLk: "CplLk", CplDLk: "CplDLk",
	FetchAdd: "FetchAdd", Swap: "Swap", CAS: "CAS",
}

// String returns the spec mnemonic, for example "MWr" or "CplD".
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "invalid"
}

// ParseKind returns the Kind for a spec mnemonic (case-sensitive, as the
// specification spells it).
func ParseKind(s string) (Kind, bool) {
	for k := MRd; k < numKinds; k++ {
		if kindNames[k] == s {
			return k, true
		}
	}
	return KindInvalid, false
}

// Kinds lists every valid kind in a stable order.
func Kinds() []Kind {
	ks := make([]Kind, 0, numKinds-1)
	for k := MRd; k < numKinds; k++ {
		ks = append(ks, k)
	}
	return ks
}

// kindTable maps Fmt (3 bits) and Type (5 bits) to a Kind; KindInvalid marks a
// reserved combination. Prefix formats are handled before this lookup.
var kindTable = func() (t [8][32]Kind) {
	set := func(k Kind, typ uint8, fmts ...Fmt) {
		for _, f := range fmts {
			t[f][typ] = k
		}
	}
	set(MRd, 0b00000, Fmt3DW, Fmt4DW)
	set(MRdLk, 0b00001, Fmt3DW, Fmt4DW)
	set(MWr, 0b00000, Fmt3DWData, Fmt4DWData)
	set(IORd, 0b00010, Fmt3DW)
	set(IOWr, 0b00010, Fmt3DWData)
	set(CfgRd0, 0b00100, Fmt3DW)
	set(CfgWr0, 0b00100, Fmt3DWData)
	set(CfgRd1, 0b00101, Fmt3DW)
	set(CfgWr1, 0b00101, Fmt3DWData)
	for r := uint8(0); r < 8; r++ {
		set(Msg, 0b10000|r, Fmt4DW)
		set(MsgD, 0b10000|r, Fmt4DWData)
	}
	set(Cpl, 0b01010, Fmt3DW)
	set(CplD, 0b01010, Fmt3DWData)
	set(CplLk, 0b01011, Fmt3DW)
	set(CplDLk, 0b01011, Fmt3DWData)
	set(FetchAdd, 0b01100, Fmt3DWData, Fmt4DWData)
	set(Swap, 0b01101, Fmt3DWData, Fmt4DWData)
	set(CAS, 0b01110, Fmt3DWData, Fmt4DWData)
	return t
}()

// KindOf returns the kind encoded by a Fmt/Type pair, or KindInvalid when the
// pair is reserved.
func KindOf(f Fmt, typ uint8) Kind { return kindTable[f&7][typ&31] }

// FmtType returns the Fmt and Type that encode k. addr64 selects the 4 DW
// form where the kind has both; messages always use 4 DW headers and take
// their routing subfield from r.
func FmtType(k Kind, addr64 bool, r Routing) (Fmt, uint8, bool) {
	var w Fmt
	if addr64 {
		w = 1
	}
	switch k {
	case MRd:
		return Fmt3DW | w, 0b00000, true
	case MRdLk:
		return Fmt3DW | w, 0b00001, true
	case MWr:
		return Fmt3DWData | w, 0b00000, true
	case IORd:
		return Fmt3DW, 0b00010, !addr64
	case IOWr:
		return Fmt3DWData, 0b00010, !addr64
	case CfgRd0:
		return Fmt3DW, 0b00100, true
	case CfgWr0:
		return Fmt3DWData, 0b00100, true
	case CfgRd1:
		return Fmt3DW, 0b00101, true
	case CfgWr1:
		return Fmt3DWData, 0b00101, true
	case Msg:
		return Fmt4DW, 0b10000 | uint8(r&7), true
	case MsgD:
		return Fmt4DWData, 0b10000 | uint8(r&7), true
	case Cpl:
		return Fmt3DW, 0b01010, true
	case CplD:
		return Fmt3DWData, 0b01010, true
	case CplLk:
		return Fmt3DW, 0b01011, true
	case CplDLk:
		return Fmt3DWData, 0b01011, true
	case FetchAdd:
		return Fmt3DWData | w, 0b01100, true
	case Swap:
		return Fmt3DWData | w, 0b01101, true
	case CAS:
		return Fmt3DWData | w, 0b01110, true
	}
	return 0, 0, false
}

// Class groups kinds by header layout and role.
type Class uint8

// Header layout classes.
const (
	ClassNone       Class = iota
	ClassMemory           // MRd, MRdLk, MWr
	ClassIO               // IORd, IOWr
	ClassConfig           // CfgRd0/1, CfgWr0/1
	ClassMessage          // Msg, MsgD
	ClassCompletion       // Cpl, CplD, CplLk, CplDLk
	ClassAtomic           // FetchAdd, Swap, CAS
)

// kindClass is indexed by any uint8 so lookups need no bounds check; kinds
// past numKinds map to ClassNone.
var kindClass = [256]Class{
	MRd: ClassMemory, MRdLk: ClassMemory, MWr: ClassMemory,
	IORd: ClassIO, IOWr: ClassIO,
	CfgRd0: ClassConfig, CfgWr0: ClassConfig, CfgRd1: ClassConfig, CfgWr1: ClassConfig,
	Msg: ClassMessage, MsgD: ClassMessage,
	Cpl: ClassCompletion, CplD: ClassCompletion, CplLk: ClassCompletion, CplDLk: ClassCompletion,
	FetchAdd: ClassAtomic, Swap: ClassAtomic, CAS: ClassAtomic,
}

// Class returns the header layout class of k.
func (k Kind) Class() Class {
	if k < numKinds {
		return kindClass[k]
	}
	return ClassNone
}

// IsRequest reports whether k is a request (not a completion).
func (k Kind) IsRequest() bool {
	c := k.Class()
	return c != ClassNone && c != ClassCompletion
}

// IsPosted reports whether k is a posted request (MWr, Msg, MsgD): one that
// is never answered by a completion.
func (k Kind) IsPosted() bool { return k == MWr || k == Msg || k == MsgD }

// IsNonPosted reports whether k is a request that the completer answers with
// a completion.
func (k Kind) IsNonPosted() bool { return k.IsRequest() && !k.IsPosted() }

// HasData reports whether TLPs of kind k carry a data payload.
func (k Kind) HasData() bool {
	switch k {
	case MWr, IOWr, CfgWr0, CfgWr1, MsgD, CplD, CplDLk, FetchAdd, Swap, CAS:
		return true
	}
	return false
}

// lengthDefined reports whether the Length field means something for k. It
// is reserved in Msg and in completions without data.
func (k Kind) lengthDefined() bool {
	return k != Msg && k != Cpl && k != CplLk && k != KindInvalid
}

// Routing is the 3-bit routing subfield (r[2:0], Type bits 2:0) of a message.
type Routing uint8

// Message routing subfield values (PCIe Base Specification 5.0 Table 2-18).
const (
	RouteToRC       Routing = 0b000 // routed to the Root Complex
	RouteByAddress  Routing = 0b001 // routed by address
	RouteByID       Routing = 0b010 // routed by ID
	RouteBroadcast  Routing = 0b011 // broadcast from the Root Complex
	RouteLocal      Routing = 0b100 // local, terminate at receiver
	RouteGatherToRC Routing = 0b101 // gathered and routed to the Root Complex
	RouteReserved6  Routing = 0b110 // reserved, terminate at receiver
	RouteReserved7  Routing = 0b111 // reserved, terminate at receiver
	numRoutings             = 8
)

var routingNames = [numRoutings]string{
	"to-rc", "by-address", "by-id", "broadcast", "local", "gather-to-rc", "reserved-6", "reserved-7",
}

// String returns a short name such as "by-id".
func (r Routing) String() string { return routingNames[r&7] }

// ParseRouting parses the names String returns.
func ParseRouting(s string) (Routing, bool) {
	for i, n := range routingNames {
		if n == s {
			return Routing(i), true
		}
	}
	return 0, false
}
