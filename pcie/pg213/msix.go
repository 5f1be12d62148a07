package pg213

import (
	"encoding/binary"
	"fmt"

	"onic/tlp"
)

// MSI-X through the block (PG213, "MSI-X Interrupt External Interface",
// with the MSI-X table and PBA in the user's memory, as the O-NIC keeps
// them in its register BAR): the block shows each physical function's
// MSI-X Enable and Function Mask bits (cfg_interrupt_msix_enable[3:0],
// cfg_interrupt_msix_mask[3:0]); the user logic puts the vector's
// message address and data from its table on cfg_interrupt_msix_address
// and cfg_interrupt_msix_data, the function on
// cfg_interrupt_msi_function_number, and pulses cfg_interrupt_msix_int;
// the block registers them and answers with a one-cycle
// cfg_interrupt_msi_sent once the message is on its way, or
// cfg_interrupt_msi_fail when it could not send it. The user logic must
// wait for one of the two before signalling again.
//
// The block does not order the message after the posted requests the
// user logic sent on RQ before it (PG213, "Transmit Transaction
// Ordering"): to keep an interrupt behind the write it announces, the
// user logic tags that write with a sequence number (s_axis_rq_tuser's
// seq_num0) and waits for the block to return it on pcie_rq_seq_num0
// with pcie_rq_seq_num_vld0 before signalling. The card simulation runs
// RQ through a pipeline longer than MSIXLatency, so an interrupt that
// does not wait overtakes its write there too.

// MSIXLatency is the cycles from cfg_interrupt_msix_int to the message
// leaving and the sent (or fail) pulse, in this model.
const MSIXLatency = 4

// RQLatency is the cycles from an RQ packet's last beat to its TLP
// leaving and its sequence number coming back, in this model: longer
// than MSIXLatency, as nothing in PG213 bounds it by the interrupt's.
const RQLatency = 12

// SeqNum0 is s_axis_rq_tuser's seq_num0[5:0] on the 512-bit interface
// (PG213, the RQ sideband table: after first_be, last_be, addr_offset,
// is_sop, is_sop0/1_ptr, is_eop, is_eop0/1_ptr, discontinue and the TPH
// fields).
var SeqNum0 = Field{"seq_num0[5:0]", 61, 6}

// FunctionState is what the block knows of a function when an interrupt
// is signalled: its MSI-X Enable and Function Mask bits (PCIe Base
// §7.7.2.2) and its Command register's Bus Master Enable.
type FunctionState struct {
	Enable, Mask, BusMaster bool
}

// MSIXRequest is what the user logic signals with cfg_interrupt_msix_int.
type MSIXRequest struct {
	Address  uint64 // cfg_interrupt_msix_address
	Data     uint32 // cfg_interrupt_msix_data
	Function uint8  // cfg_interrupt_msi_function_number
}

// MSIXResult is one cycle's answer of the interface: the sent or fail
// pulse, and the message when one leaves.
type MSIXResult struct {
	Sent, Fail bool
	Message    *tlp.TLP
}

// MSIX is the block's MSI-X interface for physical function 0, cycle by
// cycle: Signal takes a request, Cycle runs a clock cycle.
type MSIX struct {
	busy bool
	left int
	req  MSIXRequest
	fail bool
}

// Signal is cfg_interrupt_msix_int pulsing with r on the inputs, while
// the function is in state st. It is an error to signal while an earlier
// interrupt has had neither sent nor fail, for a function other than PF0
// (the card has one), or with an address that is not DW-aligned (its two
// low bits are reserved, PCIe Base §7.7.2.? the MSI-X table's Message
// Address). The block fails the message when the function may not send
// it: MSI-X disabled, the function masked, or bus mastering off.
func (x *MSIX) Signal(r MSIXRequest, st FunctionState) error {
	switch {
	case x.busy:
		return fmt.Errorf("pg213: cfg_interrupt_msix_int while the last interrupt has had neither cfg_interrupt_msi_sent nor _fail")
	case r.Function != 0:
		return fmt.Errorf("pg213: cfg_interrupt_msi_function_number %d: the card has physical function 0 only", r.Function)
	case r.Address&3 != 0:
		return fmt.Errorf("pg213: cfg_interrupt_msix_address %#x is not DW-aligned", r.Address)
	}
	x.busy, x.left, x.req = true, MSIXLatency, r
	x.fail = !st.Enable || st.Mask || !st.BusMaster
	return nil
}

// Busy says an interrupt is under way: signalled, not yet sent or failed.
func (x *MSIX) Busy() bool { return x.busy }

// Cycle runs one clock cycle; self is the block's requester ID, which the
// message carries.
func (x *MSIX) Cycle(self tlp.ID) MSIXResult {
	if !x.busy {
		return MSIXResult{}
	}
	if x.left--; x.left > 0 {
		return MSIXResult{}
	}
	x.busy = false
	if x.fail {
		return MSIXResult{Fail: true}
	}
	m := Message(self, x.req.Address, x.req.Data)
	return MSIXResult{Sent: true, Message: &m}
}

// Message is the MSI-X message the block sends for address and data: a
// one-DW memory write under the function's ID, in the 3-DW form when
// the address fits 32 bits (PCIe Base §2.2.4.1 forbids the 4-DW form
// below 4 GiB), the data little-endian.
func Message(self tlp.ID, address uint64, data uint32) tlp.TLP {
	f := tlp.Fmt3DWData
	if address>>32 != 0 {
		f = tlp.Fmt4DWData
	}
	return tlp.TLP{Fmt: f, Length: 1, FirstBE: 0xF, RequesterID: self, Address: address,
		Data: binary.LittleEndian.AppendUint32(nil, data)}
}
