package tlp

import "strconv"

// Message codes of the PCIe Base Specification 5.0 (§2.2.8).
const (
	MsgUnlock             uint8 = 0x00
	MsgInvalidateRequest  uint8 = 0x01 // ATS
	MsgInvalidateComplete uint8 = 0x02 // ATS
	MsgPageRequest        uint8 = 0x04 // ATS PRI
	MsgPRGResponse        uint8 = 0x05 // ATS PRI
	MsgLTR                uint8 = 0x10
	MsgOBFF               uint8 = 0x12
	MsgPMActiveStateNak   uint8 = 0x14
	MsgPMPME              uint8 = 0x18
	MsgPMETurnOff         uint8 = 0x19
	MsgPMETOAck           uint8 = 0x1B
	MsgAssertINTA         uint8 = 0x20
	MsgAssertINTB         uint8 = 0x21
	MsgAssertINTC         uint8 = 0x22
	MsgAssertINTD         uint8 = 0x23
	MsgDeassertINTA       uint8 = 0x24
	MsgDeassertINTB       uint8 = 0x25
	MsgDeassertINTC       uint8 = 0x26
	MsgDeassertINTD       uint8 = 0x27
	MsgErrCor             uint8 = 0x30
	MsgErrNonFatal        uint8 = 0x31
	MsgErrFatal           uint8 = 0x33
	MsgSetSlotPowerLimit  uint8 = 0x50
	MsgPTMRequest         uint8 = 0x52
	MsgPTMResponse        uint8 = 0x53
	MsgVendorType0        uint8 = 0x7E
	MsgVendorType1        uint8 = 0x7F
)

type msgData uint8

const (
	dataAny msgData = iota
	dataNone
	dataOneDW
)

type msgInfo struct {
	name   string
	routes uint8 // bit r set: routing subfield r allowed
	data   msgData
}

const allRoutes = 0xFF

func route(rs ...Routing) uint8 {
	var m uint8
	for _, r := range rs {
		m |= 1 << r
	}
	return m
}

// messages lists the codes onic knows. Routing and payload are checked only
// for codes whose rules are fixed by the base specification.
var messages = func() map[uint8]msgInfo {
	m := map[uint8]msgInfo{
		MsgUnlock:             {"Unlock", route(RouteBroadcast), dataNone},
		MsgInvalidateRequest:  {"Invalidate Request", allRoutes, dataAny},
		MsgInvalidateComplete: {"Invalidate Completion", allRoutes, dataAny},
		MsgPageRequest:        {"Page Request", allRoutes, dataAny},
		MsgPRGResponse:        {"PRG Response", allRoutes, dataAny},
		MsgLTR:                {"LTR", allRoutes, dataAny},
		MsgOBFF:               {"OBFF", allRoutes, dataAny},
		MsgPMActiveStateNak:   {"PM_Active_State_Nak", route(RouteLocal), dataNone},
		MsgPMPME:              {"PM_PME", route(RouteToRC), dataNone},
		MsgPMETurnOff:         {"PME_Turn_Off", route(RouteBroadcast), dataNone},
		MsgPMETOAck:           {"PME_TO_Ack", route(RouteGatherToRC), dataNone},
		MsgErrCor:             {"ERR_COR", route(RouteToRC), dataNone},
		MsgErrNonFatal:        {"ERR_NONFATAL", route(RouteToRC), dataNone},
		MsgErrFatal:           {"ERR_FATAL", route(RouteToRC), dataNone},
		MsgSetSlotPowerLimit:  {"Set_Slot_Power_Limit", route(RouteLocal), dataOneDW},
		MsgPTMRequest:         {"PTM Request", allRoutes, dataAny},
		MsgPTMResponse:        {"PTM Response", allRoutes, dataAny},
		MsgVendorType0:        {"Vendor_Defined Type 0", route(RouteToRC, RouteByID, RouteBroadcast, RouteLocal), dataAny},
		MsgVendorType1:        {"Vendor_Defined Type 1", route(RouteToRC, RouteByID, RouteBroadcast, RouteLocal), dataAny},
	}
	for i, n := range [...]string{"Assert_INTA", "Assert_INTB", "Assert_INTC", "Assert_INTD",
		"Deassert_INTA", "Deassert_INTB", "Deassert_INTC", "Deassert_INTD"} {
		m[MsgAssertINTA+uint8(i)] = msgInfo{n, route(RouteLocal), dataNone}
	}
	return m
}()

// messageTable is the array form of messages, for allocation-free lookup.
var messageTable = func() (t [256]struct {
	info  msgInfo
	known bool
}) {
	for c, info := range messages {
		t[c].info, t[c].known = info, true
	}
	return t
}()

func messageInfo(code uint8) (msgInfo, bool) {
	e := &messageTable[code]
	return e.info, e.known
}

// MessageName returns the spec name of a message code, or "code 0xNN" for a
// code onic does not know.
func MessageName(code uint8) string {
	if info, ok := messageInfo(code); ok {
		return info.name
	}
	return "code 0x" + strconv.FormatUint(uint64(code), 16)
}
