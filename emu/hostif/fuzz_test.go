package hostif

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
)

// FuzzRequest: no frame body makes the server's decoder panic; what it
// accepts re-encodes to a message that decodes to the same request, and
// an error is one line.
func FuzzRequest(f *testing.F) {
	for _, q := range []Request{
		{Seq: 1, Op: OpHello, Version: Version, Host: "A", MemPath: "/dev/shm/x", MemBase: 1 << 32},
		{Seq: 2, Op: OpMMIOWrite, Addr: 0x1000, Data: []byte{1, 2, 3, 4}},
		{Seq: 3, Op: OpConfigRd, BDF: 0x100, Reg: 0x10, Size: 4},
		{Seq: 4, Op: OpAdvance, Ns: 1 << 62},
		{Seq: 5, Op: OpLoad, Path: "a.img", ONIC: "onicA"},
	} {
		b, err := q.MarshalMsg(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xc1})
	f.Add([]byte{0x81, 0xa2, 'o', 'p', 0xdb, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := decodeRequest(b)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a multi-line error: %q", err)
			}
			return
		}
		out, err := req.MarshalMsg(nil)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeRequest(out)
		if err != nil {
			t.Fatalf("a decoded request does not decode after encoding: %v", err)
		}
		if len(req.Data) == 0 && len(back.Data) == 0 {
			req.Data, back.Data = nil, nil
		}
		if !reflect.DeepEqual(req, back) {
			t.Fatalf("round trip: %+v became %+v", req, back)
		}
	})
}

// FuzzReadReply: no byte stream makes the client's frame reader panic or
// accept a frame over MaxFrame.
func FuzzReadReply(f *testing.F) {
	r := Reply{Seq: 1, Op: OpWaitIRQ, IRQs: []IRQ{{At: 5, Addr: 0xfee00000, Data: 1}}}
	b, _ := r.MarshalMsg(nil)
	f.Add(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...))
	f.Add(binary.BigEndian.AppendUint32(nil, MaxFrame+1))
	f.Fuzz(func(t *testing.T, stream []byte) {
		rd := bytes.NewReader(stream)
		for range 4 {
			if _, err := ReadReply(rd); err != nil {
				return
			}
		}
	})
}
