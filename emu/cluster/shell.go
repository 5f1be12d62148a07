package cluster

import (
	"encoding/binary"
	"slices"

	"onic/emu/sim"
	"onic/kernels"
	"onic/pcie"
	"onic/tlp"
)

// A kernel slot's task shell as host software drives it: the registers
// of kernels.TaskPage (docs/kernels.md) read and written over MMIO. The
// software enables the kernel, sets the completion record's address and
// the task's length (ARG0), and rings the doorbell with a tag; the shell
// then takes ARG0 bytes of writes into the kernel's window as the task,
// and when the last output has left writes the 32-byte completion record
// into the host's memory and, if interrupts are enabled, raises the
// slot's MSI-X vector (raiseMSIX). The profiling registers describe the
// running or last task. (Task flows drive the same shell without
// software: see TaskFlowConfig.)

// shell is the task shell's register state.
type shell struct {
	settings
	tag           uint16
	done, refused bool
	// The running or last software task.
	start, end                 sim.Time
	bytesIn, bytesOut, packets uint32
	stall                      sim.Time // k.stall when it began
	stalled                    sim.Time // the manager's stall over the task, once it ended
}

// settings are the shell's read-write registers, which software sets
// before a doorbell and which outlive the task.
type settings struct {
	ctrl, cplLo, cplHi uint32
	args               [4]uint32
}

// reg is the read-write register at offset reg, or nil.
func (s *settings) reg(reg uint64) *uint32 {
	switch reg {
	case kernels.TaskCtrl:
		return &s.ctrl
	case kernels.TaskCplLo:
		return &s.cplLo
	case kernels.TaskCplHi:
		return &s.cplHi
	case kernels.TaskArg0, kernels.TaskArg1, kernels.TaskArg2, kernels.TaskArg3:
		return &s.args[(reg-kernels.TaskArg0)/4]
	}
	return nil
}

// shellAt finds the kernel whose task page holds BAR0 offset off and the
// register offset within the page.
func (o *onicNode) shellAt(off uint64) (*kernel, uint64) {
	if off < kernels.TaskPage(0) || off >= pcie.ONICMSIXTableOffset {
		return nil, 0
	}
	rel := off - kernels.TaskPage(0)
	slot, reg := int(rel/0x2000), rel%0x2000
	if slot >= maxKernelSlots || reg >= 0x1000 || o.kernels[slot] == nil {
		return nil, 0
	}
	return o.kernels[slot], reg
}

// cycles is d in the O-NIC's clock cycles.
func (k *kernel) cycles(d sim.Time) uint32 { return uint32(float64(d) / k.cycle) }

// shellRead is the task shell register at offset reg.
func (k *kernel) shellRead(reg uint64) uint32 {
	sh := &k.sh
	now := k.o.c.s.Now()
	running := k.task.active && k.task.soft
	end, stall := sh.end, sh.stalled
	if running {
		end, stall = now, k.stall-sh.stall
	}
	if p := sh.settings.reg(reg); p != nil {
		return *p
	}
	switch reg {
	case kernels.TaskKernelID:
		if k.cfg.Library != nil {
			return k.cfg.Library.ID()
		}
		return 0
	case kernels.TaskInfo:
		v := uint32(k.inputs) & 0xF
		if k.library {
			out := uint32(float64(k.prof.BeatBytes) * k.prof.OutPerIn)
			v |= uint32(k.prof.BeatBytes)&0xFF<<8 | min(out, 0xFF)<<16 | min(uint32(k.prof.Latency), 0xFF)<<24
		}
		return v
	case kernels.TaskStatus:
		var v uint32
		if running {
			v |= 1
		}
		if sh.done {
			v |= 2
		}
		if sh.refused {
			v |= 4
		}
		return v | uint32(sh.tag)<<16
	case kernels.TaskCycles:
		return k.cycles(end - sh.start)
	case kernels.TaskBytesIn:
		return sh.bytesIn
	case kernels.TaskBytesOut:
		return sh.bytesOut
	case kernels.TaskPackets:
		return sh.packets
	case kernels.TaskStallsIn:
		return k.cycles(stall)
	case kernels.TaskCount:
		return uint32(k.tasks)
	}
	return 0 // STALLS_OUT (output back-pressure is not modelled) and unmapped offsets
}

// shellWrite writes the bytes of v that mask selects to register reg, at
// ready (when the write has passed the manager).
func (k *kernel) shellWrite(reg uint64, v, mask uint32, ready sim.Time) {
	sh := &k.sh
	if p := sh.settings.reg(reg); p != nil {
		*p = *p&^mask | v&mask
		sh.cplLo &^= kernels.TaskRecordBytes - 1 // the record is 32-byte aligned
		return
	}
	if reg != kernels.TaskDoorbell {
		return // read-only and unmapped offsets ignore writes
	}
	if k.task.active || sh.ctrl&1 == 0 || k.inputs != 1 {
		// Busy, not enabled, or a two-input kernel (the shell feeds one
		// input): refused, as the error bit says.
		sh.refused = true
		k.refused++
		return
	}
	*sh = shell{settings: sh.settings, tag: uint16(v), start: ready, stall: k.stall}
	k.task = task{active: true, soft: true, start: ready, want: int(sh.args[0]), stall: k.stall}
	if k.task.want == 0 {
		k.finish(ready)
	}
}

// softFinish ends a software task at t: the completion record, then the
// slot's MSI-X vector if interrupts are on.
func (k *kernel) softFinish(t sim.Time) {
	o, sh := k.o, &k.sh
	k.tasks++
	k.taskTime += t - k.task.start
	k.taskStall += k.stall - k.task.stall
	sh.end, sh.stalled, sh.done = t, k.stall-sh.stall, true
	k.task.active = false
	s := o.host.soft
	if s == nil || s.gone {
		return // the software is gone: nobody's memory to write
	}
	rec, _ := kernels.TaskRecord{Tag: sh.tag, BytesIn: sh.bytesIn, BytesOut: sh.bytesOut, Packets: sh.packets,
		Cycles: k.cycles(t - sh.start), StallsIn: k.cycles(sh.stalled), Count: uint32(k.tasks)}.AppendBinary(nil)
	s.deviceWrite(o, uint64(sh.cplHi)<<32|uint64(sh.cplLo), rec, t)
	if sh.ctrl&2 != 0 {
		o.raiseMSIX(slices.Index(o.kernels[:], k), t)
	}
}

// eachDW calls fn for each whole or partial DW a write t to offset off
// carries: its offset, value and the mask of the bytes it enables.
func eachDW(off uint64, t *tlp.TLP, fn func(a uint64, v, mask uint32)) {
	n := int(t.Length)
	base := off &^ 3
	for i := 0; i < n && 4*i+4 <= len(t.Data); i++ {
		be := uint8(0xF)
		switch {
		case i == 0:
			be = t.FirstBE
		case i == n-1:
			be = t.LastBE
		}
		var mask uint32
		for b := range 4 {
			if be>>b&1 != 0 {
				mask |= 0xFF << (8 * b)
			}
		}
		fn(base+uint64(4*i), binary.LittleEndian.Uint32(t.Data[4*i:]), mask)
	}
}
