package kernels

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestCRCBytes: the bit-serial definition the XOR matrices come from is
// CRC-32C: the catalogue's check value, and hash/crc32 on random data.
func TestCRCBytes(t *testing.T) {
	if got := crcBytes(crc32cInit, []byte("123456789")) ^ crc32cInit; got != 0xE3069283 {
		t.Fatalf("check value %#x, want 0xE3069283", got)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	tab := crc32.MakeTable(crc32.Castagnoli)
	for n := range 200 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if got, want := crcBytes(crc32cInit, b)^crc32cInit, crc32.Checksum(b, tab); got != want {
			t.Fatalf("%d bytes: %#x, want %#x", n, got, want)
		}
	}
}

// TestCRC32CKernels: known answers through the simulated kernels — the
// check value appended, a packet with its CRC passing the check, one
// flipped bit or a packet shorter than a CRC failing it — at every length
// around a beat boundary, where the trailer spills into one more beat.
func TestCRC32CKernels(t *testing.T) {
	app, chk := CRC32C(false, 64), CRC32C(true, 64)
	got, _, err := app.Run([][]byte{[]byte("123456789")}, Full)
	if err != nil || !bytes.Equal(got, append([]byte("123456789"), 0x83, 0x92, 0x06, 0xE3)) {
		t.Fatalf("append on the check string: %x %v", got, err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	for n := 0; n <= 140; n++ {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		withCRC, st, err := app.Run([][]byte{p}, Traffic{Offer: 0.8, Ready: 0.7, Seed: uint64(n)})
		if err != nil {
			t.Fatal(err)
		}
		if want := binary.LittleEndian.AppendUint32(append([]byte{}, p...), crc32.Checksum(p, crc32.MakeTable(crc32.Castagnoli))); !bytes.Equal(withCRC, want) {
			t.Fatalf("%d bytes: appended %x, want %x", n, withCRC, want)
		}
		if wantBeats := (n + 4 + 63) / 64; st.OutBeats != wantBeats {
			t.Fatalf("%d bytes: %d beats out, want %d", n, st.OutBeats, wantBeats)
		}
		verdict := func(q []byte) byte {
			out, _, err := chk.Run([][]byte{q}, Traffic{Offer: 0.9, Ready: 0.6, Seed: uint64(n)})
			if err != nil || len(out) != len(q)+1 || !bytes.Equal(out[:len(q)], q) {
				t.Fatalf("check of %d bytes: %x %v", len(q), out, err)
			}
			return out[len(q)]
		}
		if v := verdict(withCRC); v != 0 {
			t.Fatalf("%d bytes with their CRC: verdict %d", n, v)
		}
		bad := append([]byte{}, withCRC...)
		bad[rng.IntN(len(bad))] ^= 1 << rng.IntN(8)
		if v := verdict(bad); v != 1 {
			t.Fatalf("%d bytes, a bit flipped: verdict %d", n, v)
		}
		if n < 4 {
			// Shorter than a CRC: always bad, whatever the bytes.
			if v := verdict(p); v != 1 {
				t.Fatalf("%d bytes: verdict %d", n, v)
			}
		}
	}
}

// TestCRCPartialBeats: a packet whose beats are cut short in the middle
// (kept bytes a prefix of each beat, as the kernel allows) still gets the
// CRC of all its kept bytes: such a beat's fold is too deep for one cycle,
// so the pipelined body holds its input until the fold comes back from the
// pipeline. Under backpressure, with the check kernel too.
func TestCRCPartialBeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, check := range []bool{false, true} {
		k := CRC32C(check, 64)
		for trial := range 20 {
			var cuts []int // kept bytes per beat
			total := 0
			for range 1 + rng.IntN(6) {
				n := 64
				if rng.IntN(2) == 0 {
					n = 1 + rng.IntN(63)
				}
				cuts = append(cuts, n)
				total += n
			}
			p := make([]byte, total)
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			if check && total >= 4 && trial%2 == 0 {
				binary.LittleEndian.PutUint32(p[total-4:], crc32.Checksum(p[:total-4], crc32.MakeTable(crc32.Castagnoli)))
			}
			split := func(p []byte, nb int) ([][]byte, [][]bool) {
				var data [][]byte
				var keep [][]bool
				off := 0
				for _, n := range cuts {
					d := make([]byte, nb)
					kp := make([]bool, nb)
					copy(d, p[off:off+n])
					for i := range n {
						kp[i] = true
					}
					data, keep = append(data, d), append(keep, kp)
					off += n
				}
				return data, keep
			}
			want, err := k.Reference([][]byte{p})
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := k.Run([][]byte{p}, Traffic{Offer: 0.8, Ready: 0.7, Seed: uint64(trial), split: split})
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s, beats of %v bytes: %v\ngot  %x\nwant %x", k.Name, cuts, err, got, want)
			}
		}
	}
}
