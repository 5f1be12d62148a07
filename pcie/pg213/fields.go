package pg213

// Field is a field of a descriptor (or of an interface's tuser) as PG213's
// tables give it: its name there, and its bits, Lo up, W wide. Descriptor
// bit i is bit i%8 of byte i/8, as on the AXI4-Stream data bus. These
// tables are the one place the layout is written: this package's model
// reads and writes descriptors by them, and the RTL adapters
// (designs/internal/pcie4) take their bits from them.
type Field struct {
	Name  string
	Lo, W int
}

// The request descriptor's fields (PG213, completer request descriptor
// and requester request descriptor, for memory, I/O and atomic requests):
// the completer request (CQ) and requester request (RQ) descriptors put
// the fields they share in the same bits; the rest are one interface's.
var (
	ReqAT          = Field{"Address Type", 0, 2}
	ReqAddress     = Field{"Address [63:2]", 2, 62}
	ReqDWCount     = Field{"Dword Count", 64, 11}
	ReqType        = Field{"Request Type", 75, 4}
	ReqPoisoned    = Field{"Poisoned Request (RQ)", 79, 1}
	ReqRequesterID = Field{"Requester ID", 80, 16}
	ReqTag         = Field{"Tag", 96, 8}
	ReqTargetFn    = Field{"Target Function (CQ)", 104, 8}
	ReqCompleterID = Field{"Completer ID (RQ)", 104, 16}
	ReqBARID       = Field{"BAR ID (CQ)", 112, 3}
	ReqBARAperture = Field{"BAR Aperture (CQ)", 115, 6}
	ReqIDEnable    = Field{"Requester ID Enable (RQ)", 120, 1}
	ReqTC          = Field{"Transaction Class", 121, 3}
	ReqAttr        = Field{"Attributes", 124, 3}
	ReqForceECRC   = Field{"Force ECRC (RQ)", 127, 1}
)

// The completion descriptor's fields (PG213, completer completion
// descriptor and requester completion descriptor): the CC and RC
// descriptors put the fields they share in the same bits, but for the
// lower address, 7 bits in CC and 12 in RC.
var (
	CplLowerAddress   = Field{"Lower Address (CC)", 0, 7}
	CplRCLowerAddress = Field{"Lower Address (RC)", 0, 12}
	CplAT             = Field{"Address Type (CC)", 8, 2}
	CplErrorCode      = Field{"Error Code (RC)", 12, 4}
	CplByteCount      = Field{"Byte Count", 16, 13}
	CplLocked         = Field{"Locked Read Completion", 29, 1}
	CplRequestDone    = Field{"Request Completed (RC)", 30, 1}
	CplDWCount        = Field{"Dword Count", 32, 11}
	CplStatus         = Field{"Completion Status", 43, 3}
	CplPoisoned       = Field{"Poisoned Completion", 46, 1}
	CplRequesterID    = Field{"Requester ID", 48, 16}
	CplTag            = Field{"Tag", 64, 8}
	CplCompleterID    = Field{"Completer ID", 72, 16} // bus (87:80) over device/function (79:72)
	CplIDEnable       = Field{"Completer ID Enable (CC)", 88, 1}
	CplTC             = Field{"Transaction Class", 89, 3}
	CplAttr           = Field{"Attributes", 92, 3}
	CplForceECRC      = Field{"Force ECRC (CC)", 95, 1}
)

// The byte enables of a request's first beat in m_axis_cq_tuser and
// s_axis_rq_tuser (PG213, the CQ and RQ sideband tables).
var (
	UserFirstBE = Field{"first_be[3:0]", 0, 4}
	UserLastBE  = Field{"last_be[3:0]", 8, 4}
)

// RequestFields and CompletionFields list each descriptor's fields, for
// the tests that hold the table together.
var (
	RequestFields = []Field{ReqAT, ReqAddress, ReqDWCount, ReqType, ReqPoisoned, ReqRequesterID, ReqTag, ReqTargetFn,
		ReqCompleterID, ReqBARID, ReqBARAperture, ReqIDEnable, ReqTC, ReqAttr, ReqForceECRC}
	CompletionFields = []Field{CplLowerAddress, CplRCLowerAddress, CplAT, CplErrorCode, CplByteCount, CplLocked, CplRequestDone,
		CplDWCount, CplStatus, CplPoisoned, CplRequesterID, CplTag, CplCompleterID, CplIDEnable, CplTC, CplAttr, CplForceECRC}
)
