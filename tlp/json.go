package tlp

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The JSON form of a TLP is one object with snake_case fields, present when
// the kind carries them (docs/tlp.md lists them). AppendJSON writes them in a
// fixed order, so output is byte-for-byte deterministic.

// AppendJSON appends the JSON object of t to b.
func (t *TLP) AppendJSON(b []byte) []byte {
	k := t.Kind()
	c := k.Class()
	b = append(b, `{"kind":`...)
	b = strconv.AppendQuote(b, k.String())
	b = appendUint(b, "fmt", uint64(t.Fmt))
	b = appendUint(b, "type", uint64(t.Type))
	b = appendUint(b, "tc", uint64(t.TC))
	b = appendUint(b, "attr", uint64(t.Attr))
	b = appendBool(b, "ln", t.LN)
	b = appendBool(b, "th", t.TH)
	b = appendBool(b, "td", t.TD)
	b = appendBool(b, "ep", t.EP)
	b = appendUint(b, "at", uint64(t.AT))
	if k.lengthDefined() || t.Length != 0 {
		b = appendUint(b, "length", uint64(t.Length))
	}
	b = appendString(b, "requester_id", t.RequesterID.String())
	if c == ClassCompletion || c == ClassConfig {
		b = appendString(b, "completer_id", t.CompleterID.String())
	}
	b = appendUint(b, "tag", uint64(t.Tag))
	switch c {
	case ClassMemory, ClassIO, ClassAtomic, ClassConfig:
		b = appendUint(b, "first_be", uint64(t.FirstBE))
		b = appendUint(b, "last_be", uint64(t.LastBE))
	}
	if c == ClassMemory || c == ClassIO || c == ClassAtomic || (c == ClassMessage && t.Routing() == RouteByAddress) {
		b = appendString(b, "address", "0x"+strconv.FormatUint(t.Address, 16))
	}
	if c == ClassMemory || c == ClassIO || c == ClassAtomic {
		b = appendUint(b, "ph", uint64(t.PH))
	}
	if c == ClassConfig {
		b = appendUint(b, "register", uint64(t.Register))
	}
	if c == ClassCompletion {
		b = appendString(b, "status", t.Status.String())
		b = appendBool(b, "bcm", t.BCM)
		b = appendUint(b, "byte_count", uint64(t.ByteCount))
		b = appendUint(b, "lower_address", uint64(t.LowerAddress))
	}
	if c == ClassMessage {
		b = appendString(b, "routing", t.Routing().String())
		b = appendUint(b, "message_code", uint64(t.MessageCode))
		b = appendString(b, "message_name", MessageName(t.MessageCode))
		if t.Routing() != RouteByAddress {
			if t.Routing() == RouteByID {
				b = appendString(b, "destination_id", t.DestinationID().String())
			}
			b = appendString(b, "message_data", hex.EncodeToString(t.MessageData[:]))
		}
	}
	if len(t.Prefixes) > 0 {
		b = appendString(b, "prefixes", hex.EncodeToString(t.Prefixes))
	}
	switch {
	case t.Snapped:
		b = appendBool(b, "snapped", true)
	case k.HasData():
		b = appendString(b, "data", hex.EncodeToString(t.Data))
	}
	if t.TD && !t.Snapped {
		b = appendString(b, "ecrc", fmt.Sprintf("0x%08x", t.Digest))
	}
	return append(b, '}')
}

func appendKey(b []byte, key string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func appendUint(b []byte, key string, v uint64) []byte {
	return strconv.AppendUint(appendKey(b, key), v, 10)
}

func appendBool(b []byte, key string, v bool) []byte {
	return strconv.AppendBool(appendKey(b, key), v)
}

func appendString(b []byte, key, v string) []byte {
	return strconv.AppendQuote(appendKey(b, key), v)
}

// MarshalJSON returns the JSON object of t.
func (t *TLP) MarshalJSON() ([]byte, error) { return t.AppendJSON(nil), nil }

// jsonTLP is the input form: every field optional, so presence can be told
// from a zero value.
type jsonTLP struct {
	Kind          *string `json:"kind"`
	Fmt           *uint8  `json:"fmt"`
	Type          *uint8  `json:"type"`
	TC            *uint8  `json:"tc"`
	Attr          *uint8  `json:"attr"`
	LN            *bool   `json:"ln"`
	TH            *bool   `json:"th"`
	TD            *bool   `json:"td"`
	EP            *bool   `json:"ep"`
	AT            *uint8  `json:"at"`
	Length        *uint16 `json:"length"`
	RequesterID   *string `json:"requester_id"`
	CompleterID   *string `json:"completer_id"`
	Tag           *uint16 `json:"tag"`
	FirstBE       *uint8  `json:"first_be"`
	LastBE        *uint8  `json:"last_be"`
	Address       *string `json:"address"`
	PH            *uint8  `json:"ph"`
	Register      *uint16 `json:"register"`
	Status        *string `json:"status"`
	BCM           *bool   `json:"bcm"`
	ByteCount     *uint16 `json:"byte_count"`
	LowerAddress  *uint8  `json:"lower_address"`
	Routing       *string `json:"routing"`
	MessageCode   *uint8  `json:"message_code"`
	MessageName   *string `json:"message_name"`
	DestinationID *string `json:"destination_id"`
	MessageData   *string `json:"message_data"`
	Prefixes      *string `json:"prefixes"`
	Data          *string `json:"data"`
	ECRC          *string `json:"ecrc"`
	Snapped       *bool   `json:"snapped"`

	// Capture fields, written by `onic tlp decode --pcap`: accepted and
	// ignored here (the CLI reads them for `encode --pcap`).
	TimeNS    *int64  `json:"time_ns"`
	Tap       *uint16 `json:"tap"`
	Direction *string `json:"direction"`
}

// FieldError reports a JSON field that is malformed or does not apply to
// the TLP's kind.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return "field " + e.Field + ": " + e.Reason }

// UnmarshalJSON reads the JSON form. kind is required; fmt and type, when
// absent, are derived from kind, the address width (4 DW headers for
// addresses of 4 GB and above) and, for messages, routing. Fields that the
// kind does not carry and unknown fields are errors. When length is absent
// it is derived from data. An explicit ecrc is kept in Digest and written
// as is by AppendBinary (so a deliberately wrong digest can be crafted to
// test a receiver); without it the digest is computed on encoding.
//
// Long: one short case per kind it handles, in one switch; split, the
// cases would only move apart.
func (t *TLP) UnmarshalJSON(b []byte) error {
	var j jsonTLP
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return jsonErr(err)
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON object")
	}
	if j.Kind == nil {
		return &FieldError{"kind", "missing; want a spec mnemonic such as MWr or CplD"}
	}
	k, ok := ParseKind(*j.Kind)
	if !ok {
		return &FieldError{"kind", fmt.Sprintf("%q is not a TLP kind (want one of %s)", *j.Kind, kindList())}
	}
	c := k.Class()
	*t = TLP{}
	var err error
	set := func(field string, present, allowed bool) bool {
		if present && !allowed && err == nil {
			err = &FieldError{field, "does not apply to " + k.String()}
		}
		return present && allowed
	}
	addrKinds := c == ClassMemory || c == ClassIO || c == ClassAtomic
	beKinds := addrKinds || c == ClassConfig
	route := RouteToRC
	if set("routing", j.Routing != nil, c == ClassMessage) {
		r, ok := ParseRouting(*j.Routing)
		if !ok {
			return &FieldError{"routing", fmt.Sprintf("%q is not a routing (want to-rc, by-address, by-id, broadcast, local, gather-to-rc, reserved-6, reserved-7)", *j.Routing)}
		}
		route = r
	}
	if set("address", j.Address != nil, addrKinds || (c == ClassMessage && route == RouteByAddress)) {
		a, perr := parseUint64(*j.Address)
		if perr != nil {
			return &FieldError{"address", perr.Error()}
		}
		t.Address = a
	}
	if c == ClassMessage && route == RouteByAddress && j.Address == nil {
		return &FieldError{"address", "required for a message routed by address"}
	}
	f, typ, ok := FmtType(k, t.Address >= 1<<32, route)
	if !ok {
		return &FieldError{"kind", k.String() + " has no 64-bit form"}
	}
	if j.Fmt != nil || j.Type != nil {
		if j.Fmt == nil || j.Type == nil {
			return &FieldError{"fmt", "fmt and type go together"}
		}
		if KindOf(Fmt(*j.Fmt), *j.Type) != k {
			return &FieldError{"type", fmt.Sprintf("fmt %d type %d encode %s, not %s", *j.Fmt, *j.Type, KindOf(Fmt(*j.Fmt), *j.Type), k)}
		}
		if c == ClassMessage && j.Routing != nil && Routing(*j.Type&7) != route {
			return &FieldError{"routing", fmt.Sprintf("%s contradicts type %d", route, *j.Type)}
		}
		f, typ = Fmt(*j.Fmt), *j.Type
	}
	t.Fmt, t.Type = f, typ
	if j.TC != nil {
		t.TC = *j.TC
	}
	if j.Attr != nil {
		t.Attr = Attr(*j.Attr)
	}
	t.LN, t.TH, t.TD, t.EP = deref(j.LN), deref(j.TH), deref(j.TD), deref(j.EP)
	if j.AT != nil {
		t.AT = *j.AT
	}
	if j.Tag != nil {
		t.Tag = *j.Tag
	}
	if j.RequesterID != nil {
		if t.RequesterID, err = ParseID(*j.RequesterID); err != nil {
			return &FieldError{"requester_id", err.Error()}
		}
	}
	if set("completer_id", j.CompleterID != nil, c == ClassCompletion || c == ClassConfig) {
		if t.CompleterID, err = ParseID(*j.CompleterID); err != nil {
			return &FieldError{"completer_id", err.Error()}
		}
	}
	if set("first_be", j.FirstBE != nil, beKinds) {
		t.FirstBE = *j.FirstBE
	}
	if set("last_be", j.LastBE != nil, beKinds) {
		t.LastBE = *j.LastBE
	}
	if set("ph", j.PH != nil, addrKinds) {
		t.PH = *j.PH
	}
	if set("register", j.Register != nil, c == ClassConfig) {
		t.Register = *j.Register
	}
	if set("status", j.Status != nil, c == ClassCompletion) {
		s, ok := ParseStatus(*j.Status)
		if !ok {
			return &FieldError{"status", fmt.Sprintf("%q is not SC, UR, CRS, CA or reserved(n)", *j.Status)}
		}
		t.Status = s
	}
	if set("bcm", j.BCM != nil, c == ClassCompletion) {
		t.BCM = *j.BCM
	}
	if set("byte_count", j.ByteCount != nil, c == ClassCompletion) {
		t.ByteCount = *j.ByteCount
	}
	if set("lower_address", j.LowerAddress != nil, c == ClassCompletion) {
		t.LowerAddress = *j.LowerAddress
	}
	if set("message_code", j.MessageCode != nil, c == ClassMessage) {
		t.MessageCode = *j.MessageCode
	} else if c == ClassMessage && err == nil {
		return &FieldError{"message_code", "required for " + k.String()}
	}
	set("message_name", j.MessageName != nil, c == ClassMessage) // informative only
	if set("message_data", j.MessageData != nil, c == ClassMessage && route != RouteByAddress) {
		md, herr := hex.DecodeString(*j.MessageData)
		if herr != nil || len(md) != 8 {
			return &FieldError{"message_data", "want 16 hex digits (header bytes 8-15)"}
		}
		copy(t.MessageData[:], md)
	}
	if set("destination_id", j.DestinationID != nil, c == ClassMessage && route == RouteByID) {
		id, perr := ParseID(*j.DestinationID)
		if perr != nil {
			return &FieldError{"destination_id", perr.Error()}
		}
		if j.MessageData != nil && id != t.DestinationID() {
			return &FieldError{"destination_id", fmt.Sprintf("%s contradicts message_data bytes 0-1 (%s)", id, t.DestinationID())}
		}
		t.SetDestinationID(id)
	}
	if j.Prefixes != nil {
		if t.Prefixes, err = hex.DecodeString(*j.Prefixes); err != nil {
			return &FieldError{"prefixes", "not hex: " + err.Error()}
		}
	}
	if set("data", j.Data != nil, k.HasData()) {
		if t.Data, err = hex.DecodeString(*j.Data); err != nil {
			return &FieldError{"data", "not hex: " + err.Error()}
		}
	}
	if err != nil {
		return err
	}
	switch {
	case j.Length != nil:
		// For Msg and Cpl this carries the reserved field of a decoded TLP.
		t.Length = *j.Length
	case k.HasData() && !deref(j.Snapped):
		if len(t.Data)%4 != 0 || len(t.Data) == 0 {
			return &FieldError{"data", fmt.Sprintf("%d bytes is not a whole number of DWs (1 to 1024)", len(t.Data))}
		}
		t.Length = uint16(len(t.Data) / 4)
	case k.lengthDefined():
		return &FieldError{"length", "required for " + k.String() + " (DW count 1-1024)"}
	}
	if c == ClassCompletion && j.ByteCount == nil {
		return &FieldError{"byte_count", "required for " + k.String() + " (1-4096)"}
	}
	if deref(j.Snapped) {
		// A TLP read from a capture snapped to the header: no payload or
		// digest to give, and its length must be.
		switch {
		case !k.HasData() && !t.TD:
			return &FieldError{"snapped", k.String() + " without td has no payload or digest a capture could leave out"}
		case j.Data != nil:
			return &FieldError{"data", "a snapped TLP has no payload (its capture kept the header only)"}
		case j.ECRC != nil:
			return &FieldError{"ecrc", "a snapped TLP has no digest (its capture kept the header only)"}
		case k.HasData() && j.Length == nil:
			return &FieldError{"length", "required for a snapped TLP (its payload's DW count)"}
		}
		t.Snapped = true
		return nil
	}
	if k.HasData() && int(t.Length)*4 != len(t.Data) {
		return &FieldError{"data", fmt.Sprintf("%d bytes but length is %d DW", len(t.Data), t.Length)}
	}
	if j.ECRC != nil {
		if !t.TD {
			return &FieldError{"ecrc", "needs td: true"}
		}
		v, perr := parseUint64(*j.ECRC)
		if perr != nil || v > 0xFFFFFFFF {
			return &FieldError{"ecrc", "want a 32-bit hex value such as 0x1a2b3c4d"}
		}
		t.Digest = uint32(v)
		t.keepDigest = true
	}
	return nil
}

func deref(b *bool) bool { return b != nil && *b }

func parseUint64(s string) (uint64, error) {
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number (use 0x-prefixed hex or decimal)", s)
	}
	return v, nil
}

func kindList() string {
	var names []string
	for _, k := range Kinds() {
		names = append(names, k.String())
	}
	return strings.Join(names, ", ")
}

// jsonErr turns encoding/json's errors into one-line errors naming the
// field.
func jsonErr(err error) error {
	switch e := err.(type) {
	case *json.UnmarshalTypeError:
		return &FieldError{e.Field, fmt.Sprintf("%s does not fit (want %s)", e.Value, e.Type)}
	case *json.SyntaxError:
		return fmt.Errorf("malformed JSON at byte %d: %v", e.Offset, e)
	}
	if s := err.Error(); strings.HasPrefix(s, "json: unknown field ") {
		return &FieldError{strings.Trim(strings.TrimPrefix(s, "json: unknown field "), `"`), "unknown field"}
	}
	return fmt.Errorf("malformed JSON: %v", err)
}
