package cluster

import (
	"onic/emu/sim"
	"onic/tlp"
)

// stage is what a request is for in an NVMe command, so the device and the
// report know it: plain DMA, or one step of a command.
type stage uint8

const (
	stPlain      stage = iota // a flow's read or write
	stDoorbell                // the driver rings the submission-queue doorbell
	stFetch                   // the device fetches the 64-byte command
	stData                    // the device writes the data
	stCQE                     // the device writes the 16-byte completion entry
	stMSI                     // the device signals the completion with an MSI
	stTaskReg                 // the host writes a kernel's task register (ARG0, the doorbell)
	stTaskRecord              // a kernel's task shell writes its completion record
)

// control says whether a stage moves commands rather than data; its
// bytes do not count as the flow's payload.
func (s stage) control() bool { return s != stPlain && s != stData }

// nvmePage is the unit in which a device's media hands data to its DMA
// engine: each page is written out as soon as the media has read it, so
// the transfer overlaps the media time as in a real drive.
const nvmePage = 4096

// device is the PCIe device a host node stands for when its kind takes
// commands (an NVMe drive): the cluster hands it the doorbell writes
// that arrive in its memory and the ends of the reads it issued, and it
// schedules its own events (it is their sim.Handler). A new kind of
// device is a type with these methods and an entry in deviceKinds, not
// an edit of the cluster's delivery code.
type device interface {
	// doorbell takes transfer xi of flow f's doorbell write.
	doorbell(f *flowState, xi int32)
	// fetched takes the last completion of a read it issued for
	// transfer xi of flow f (stFetch).
	fetched(f *flowState, xi int32)
}

// deviceKinds makes the device of each scenario host kind that takes
// commands; the others (server, gpu, sensor) have none, and a doorbell
// written into one's memory is dropped (doorbell-not-nvme).
var deviceKinds = map[string]func(h *hostNode) device{
	"nvme": func(h *hostNode) device { return &nvmeDrive{h: h} },
}

// nvmeDrive is an NVMe device's media: the commands whose data it is
// reading (by the index its events carry), and when it can start the
// next read.
type nvmeDrive struct {
	h         *hostNode
	cmds      []nvmeCmd
	freeCmds  []int
	mediaFree sim.Time
}

// nvmeCmd is a command whose data the media is reading.
type nvmeCmd struct {
	flow  *flowState
	xi    int32
	start sim.Time // when the media began this command
	page  int      // pages written so far
}

// doorbell handles the doorbell write of transfer xi of flow f arriving
// at the drive: it fetches the command from the submission queue.
func (d *nvmeDrive) doorbell(f *flowState, xi int32) {
	h := d.h
	o := h.onics[0]
	slot := uint64(xi) % uint64(f.cfg.Depth)
	f.inject(xi, tlp.MRd, o.fn.BARAddress(2)+f.cfg.NVMe.SQ+64*slot, 64, h.cfg.MRRS, stFetch, o.link, h)
}

// pageTime is how long the media takes to read one page.
func (d *nvmeDrive) pageTime() sim.Time {
	return sim.Time(nvmePage * 8 / d.h.cfg.NVMe.MediaGbps * float64(sim.Nanosecond))
}

// fetched starts the media read of the command just fetched: it begins
// after the media latency, or later if the media is still busy with
// earlier commands, and yields a page every pageTime. The transfer stays
// open (one more pending step) until the last page is out.
func (d *nvmeDrive) fetched(f *flowState, xi int32) {
	h := d.h
	c := h.c
	f.xfers[xi].left++
	pages := (f.cfg.Size + nvmePage - 1) / nvmePage
	start := max(c.s.Now()+ps(h.cfg.NVMe.MediaLatency), d.mediaFree)
	d.mediaFree = start + sim.Time(pages)*d.pageTime()
	i := len(d.cmds)
	if n := len(d.freeCmds); n > 0 {
		i, d.freeCmds = d.freeCmds[n-1], d.freeCmds[:n-1]
	} else {
		d.cmds = append(d.cmds, nvmeCmd{})
	}
	d.cmds[i] = nvmeCmd{flow: f, xi: xi, start: start}
	c.s.At(start+d.pageTime(), d, uint64(i))
}

// Handle writes out the page the media has just read for command arg;
// after the last page it writes the completion entry (posted writes stay
// in order, so the entry lands after the data) and closes the media
// step.
func (d *nvmeDrive) Handle(s *sim.Sim, arg uint64) {
	i := int(arg)
	cmd := &d.cmds[i]
	h, f, xi := d.h, cmd.flow, cmd.xi
	o := h.onics[0]
	slot := uint64(xi) % uint64(f.cfg.Depth)
	bar := o.fn.BARAddress(2)
	step := uint64((f.cfg.Size + 4095) &^ 4095)
	off := cmd.page * nvmePage
	n := min(nvmePage, f.cfg.Size-off)
	f.inject(xi, tlp.MWr, bar+f.cfg.NVMe.Data+step*slot+uint64(off), n, h.cfg.MPS, stData, o.link, h)
	cmd.page++
	if off+n < f.cfg.Size {
		s.At(cmd.start+sim.Time(cmd.page+1)*d.pageTime(), d, arg)
		return
	}
	f.inject(xi, tlp.MWr, bar+f.cfg.NVMe.CQ+16*slot, 16, h.cfg.MPS, stCQE, o.link, h)
	if f.cfg.NVMe.MSI != 0 {
		f.inject(xi, tlp.MWr, bar+f.cfg.NVMe.MSI, 4, h.cfg.MPS, stMSI, o.link, h)
	}
	d.freeCmds = append(d.freeCmds, i)
	f.settled(xi, true)
}
