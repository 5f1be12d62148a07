package kernels

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"onic/kernels/replay"
	"onic/testbenches/tools"
	"onic/testbenches/verilator"
)

// taskSet is two tasks of three packets each (odd lengths, a partial last
// beat) for k.
func taskSet(k *Kernel, seed uint64) []Task {
	rng := rand.New(rand.NewPCG(seed, 7))
	var tasks []Task
	for ti := range 2 {
		task := Task{Tag: uint16(0x100 + ti)}
		for _, n := range []int{1 + rng.IntN(3*k.Lanes), k.Lanes, 2*k.Lanes + 3} {
			in := k.sample(rng, n)
			var p [][]byte
			p = append(p, in...)
			task.Packets = append(task.Packets, p)
		}
		tasks = append(tasks, task)
	}
	return tasks
}

// TestTaskShell: every library kernel in its task shell takes nothing
// before the doorbell, takes exactly the task's packets after it, gives
// what its reference gives, refuses a second doorbell while busy, writes a
// completion record whose counts are the reference's (bytes in and out,
// packets) and then raises its interrupt, and reads back the same counters
// and its identity over AXI-Lite.
func TestTaskShell(t *testing.T) {
	for _, k := range Library() {
		t.Run(k.Name, func(t *testing.T) {
			tasks := taskSet(k, uint64(len(k.Name)))
			run, err := k.RunTask(tasks, Traffic{Offer: 0.7, Ready: 0.6, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			var want []byte
			prof, _ := k.Profile()
			for ti, task := range tasks {
				var in, out, beatsIn uint32
				for _, p := range task.Packets {
					o, err := k.Reference(p)
					if err != nil {
						t.Fatal(err)
					}
					want = append(want, o...)
					out += uint32(len(o))
					for _, b := range p {
						in += uint32(len(b))
					}
					beatsIn += uint32((len(p[0]) + k.InBits()/8 - 1) / (k.InBits() / 8))
				}
				r := run.Records[ti]
				if r.Tag != task.Tag || r.BytesIn != in || r.BytesOut != out || r.Packets != 3 || r.Count != uint32(ti+1) || r.Cycles < beatsIn || !run.Late[ti] {
					t.Errorf("task %d: record %+v (want tag %#x, %d B in, %d B out, 3 packets, count %d, >= %d cycles), interrupt after it %v",
						ti, r, task.Tag, in, out, ti+1, beatsIn, run.Late[ti])
				}
				regs := run.Regs[ti]
				for off, v := range map[uint32]uint32{
					TaskKernelID: k.ID(), TaskInfo: k.info(prof), TaskCtrl: 3, TaskStatus: uint32(task.Tag)<<16 | 0b110,
					TaskCplLo: taskCplAddr & 0xFFFFFFFF, TaskCplHi: taskCplAddr >> 32, 0x18: 0, 0x20: 0, // (reserved)
					TaskArg0: uint32(len(task.Packets[0][0]) + len(task.Packets[1][0]) + len(task.Packets[2][0])), TaskDoorbell: 0,
					TaskCycles: r.Cycles, TaskBytesIn: r.BytesIn, TaskBytesOut: r.BytesOut, TaskPackets: r.Packets,
					TaskStallsIn: r.StallsIn, TaskStallsOut: r.StallsOut, TaskCount: r.Count,
				} {
					if regs[off] != v {
						t.Errorf("task %d: register %#02x reads %#x, want %#x", ti, off, regs[off], v)
					}
				}
			}
			if !bytes.Equal(run.Out, want) {
				t.Errorf("output differs from the reference at byte %d of %d", firstDiff(run.Out, want), len(want))
			}
			if run.Refused != 2 {
				t.Errorf("%d doorbells refused while busy, want 2", run.Refused)
			}
		})
	}
}

// TestTaskShellRTL: the task shell's Verilog is clean under Verilator
// -Wall and, replayed in Verilator on the simulator's inputs, shows the
// same outputs on every cycle (streams, AXI-Lite reads, records and
// interrupts) for a two-input kernel, one that grows its packets and one
// with registers of its own.
func TestTaskShellRTL(t *testing.T) {
	tools.Long(t)
	tools.Require(t, "verilator")
	for _, name := range []string{"sum-int32", "crc32c-append", "histogram"} {
		k := mustLookup(t, name)
		m, err := k.TaskModule()
		if err != nil {
			t.Fatal(err)
		}
		verilator.Lint(t, m)
		run, err := k.RunTask(taskSet(k, 9), Traffic{Offer: 0.8, Ready: 0.7, Seed: 11})
		if err != nil {
			t.Fatal(err)
		}
		r, err := k.ReplayTask(run, replay.Verilator, t.TempDir())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := r.Diff(); d != "" {
			t.Fatalf("%s: %s", name, d)
		}
		if len(r.Sim) < 50 {
			t.Fatalf("%s: only %d cycles", name, len(r.Sim))
		}
	}
}

// TestTaskRecord: records round-trip, and a short record or one whose
// done bit is clear is refused.
func TestTaskRecord(t *testing.T) {
	r := TaskRecord{Tag: 0xABCD, BytesIn: 1, BytesOut: 2, Packets: 3, Cycles: 4, StallsIn: 5, StallsOut: 6, Count: 7}
	b, _ := r.AppendBinary(nil)
	if len(b) != TaskRecordBytes || b[3] != 0x80 {
		t.Fatalf("% x", b)
	}
	if got, err := ParseTaskRecord(b); err != nil || got != r {
		t.Errorf("round trip: %+v %v", got, err)
	}
	if _, err := ParseTaskRecord(b[:31]); err == nil {
		t.Error("short record accepted")
	}
	b[3] = 0
	if _, err := ParseTaskRecord(b); err == nil {
		t.Error("record without its done bit accepted")
	}
}
