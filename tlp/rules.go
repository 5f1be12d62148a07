package tlp

import (
	"fmt"
	"strconv"
)

// Rule identifies one rule of the PCIe Base Specification that a TLP can
// break. Each Rule is itself an error, so callers test for a broken rule
// with errors.Is(err, tlp.ErrCross4K).
type Rule uint8

// The rules Decode, Validate and AppendBinary check. Section numbers refer
// to the PCI Express Base Specification, Revision 5.0 (non-flit mode).
const (
	ErrTruncatedHeader  Rule = iota + 1 // fewer bytes than the prefixes and header need
	ErrTruncatedPayload                 // fewer bytes than Length (and the digest) need
	ErrLengthMismatch                   // more bytes than Length (and the digest) take, or data where none belongs
	ErrReservedFmtType                  // a reserved Fmt/Type combination
	ErrPrefix                           // TLP prefix rules
	ErrCross4K                          // a memory request crossing a 4 KB boundary
	ErrFirstBEZero                      // First DW BE 0000b with Length > 1
	ErrLastBE                           // Last DW BE non-zero with Length 1, or zero with Length > 1
	ErrBENonContiguous                  // non-contiguous byte enables where they must be contiguous
	ErrIOConfigLength                   // I/O or configuration request with Length other than 1
	ErrIOConfigField                    // I/O or configuration request with a field that must be zero set
	ErrAtomicSize                       // AtomicOp operand size not allowed
	ErrAtomicAlign                      // AtomicOp address not naturally aligned
	ErrByteCount                        // completion byte count inconsistent with Length and Lower Address
	ErrCplStatus                        // reserved completion status, or data with a failed status
	ErrECRC                             // ECRC mismatch
	ErrReservedBits                     // a reserved bit or field is not zero
	ErrAddress64                        // 64-bit address format used below 4 GB
	ErrMessage                          // message code used with the wrong routing or payload
	ErrFieldRange                       // a field value that does not fit or contradicts the kind (encoding)
	numRules
)

var ruleText = [numRules]struct{ name, section, text string }{
	ErrTruncatedHeader:  {"truncated-header", "2.2.1", "TLP shorter than its prefixes and header"},
	ErrTruncatedPayload: {"truncated-payload", "2.2.2", "TLP shorter than its Length and digest"},
	ErrLengthMismatch:   {"length-mismatch", "2.2.2", "payload does not match the Length field"},
	ErrReservedFmtType:  {"reserved-fmt-type", "2.2.1", "reserved Fmt/Type encoding"},
	ErrPrefix:           {"prefix", "2.2.10", "TLP prefix rules"},
	ErrCross4K:          {"cross-4k", "2.2.7", "memory request crosses a 4 KB boundary"},
	ErrFirstBEZero:      {"first-be-zero", "2.2.5", "First DW BE must not be 0000b when Length > 1 DW"},
	ErrLastBE:           {"last-be", "2.2.5", "Last DW BE must be 0000b when Length is 1 DW and non-zero otherwise"},
	ErrBENonContiguous:  {"be-non-contiguous", "2.2.5", "byte enables must be contiguous"},
	ErrIOConfigLength:   {"io-config-length", "2.2.7", "I/O and configuration requests must have Length 1 DW"},
	ErrIOConfigField:    {"io-config-field", "2.2.7", "I/O and configuration requests require TC 0, Attr 0, AT 0, TH 0 and Last DW BE 0000b"},
	ErrAtomicSize:       {"atomic-size", "2.2.7", "AtomicOp operand size must be 4 or 8 bytes (FetchAdd, Swap) or 4, 8 or 16 bytes (CAS)"},
	ErrAtomicAlign:      {"atomic-align", "2.2.7", "AtomicOp address must be naturally aligned to the operand size"},
	ErrByteCount:        {"byte-count", "2.3.1.1", "completion Byte Count inconsistent with Length and Lower Address"},
	ErrCplStatus:        {"cpl-status", "2.2.9", "invalid completion status"},
	ErrECRC:             {"ecrc", "2.7.1", "ECRC mismatch"},
	ErrReservedBits:     {"reserved-bits", "2.2.1", "reserved bits must be zero"},
	ErrAddress64:        {"address-64", "2.2.4.1", "addresses below 4 GB must use the 32-bit format"},
	ErrMessage:          {"message", "2.2.8", "message code used with the wrong routing or payload"},
	ErrFieldRange:       {"field-range", "2.2", "field value out of range"},
}

// Name returns a short stable identifier such as "cross-4k".
func (r Rule) Name() string {
	if r > 0 && r < numRules {
		return ruleText[r].name
	}
	return "rule-" + strconv.Itoa(int(r))
}

// Section returns the PCIe Base Specification 5.0 section stating the rule.
func (r Rule) Section() string {
	if r > 0 && r < numRules {
		return ruleText[r].section
	}
	return ""
}

// Error describes the rule, with its spec section.
func (r Rule) Error() string {
	if r > 0 && r < numRules {
		return ruleText[r].text + " (PCIe Base 5.0 §" + ruleText[r].section + ")"
	}
	return "unknown TLP rule " + strconv.Itoa(int(r))
}

// Rules lists every rule in a stable order.
func Rules() []Rule {
	rs := make([]Rule, 0, numRules-1)
	for r := Rule(1); r < numRules; r++ {
		rs = append(rs, r)
	}
	return rs
}

// Error reports a TLP that breaks a rule. Offset is the byte offset in the
// TLP where the problem was found, or -1 when it is not tied to a byte.
type Error struct {
	Rule   Rule
	Offset int
	Detail string
}

// ruleErr is kept out of line: it runs only on the error path, and inlining
// it would bloat the checks that run on every TLP.
//
//go:noinline
func ruleErr(r Rule, off int, format string, args ...any) error {
	return &Error{Rule: r, Offset: off, Detail: fmt.Sprintf(format, args...)}
}

// Error returns "rule-name: detail (spec text §section)".
func (e *Error) Error() string {
	return e.Rule.Name() + ": " + e.Detail + " — " + e.Rule.Error()
}

// Unwrap returns the rule, so errors.Is matches it.
func (e *Error) Unwrap() error { return e.Rule }
