package ipnet

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"unsafe"
)

// Linux TUN/TAP (include/uapi/linux/if_tun.h).
const (
	tunSetIff = 0x400454ca // TUNSETIFF
	iffTAP    = 0x0002
	iffNoPI   = 0x1000
)

// openTAP creates TAP device name (in the caller's network namespace)
// and returns its file, non-blocking so that Go's poller serves it and
// Close ends a pending Read.
func openTAP(name string) (*os.File, error) {
	fd, err := syscall.Open("/dev/net/tun", syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("/dev/net/tun: %w (emu net needs root, or CAP_NET_ADMIN)", err)
	}
	var req [40]byte // struct ifreq: name, then flags
	copy(req[:15], name)
	binary.NativeEndian.PutUint16(req[16:], iffTAP|iffNoPI)
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), tunSetIff, uintptr(unsafe.Pointer(&req[0]))); e != 0 {
		syscall.Close(fd)
		return nil, fmt.Errorf("TUNSETIFF %s: %w", name, e)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "tap:"+name), nil
}

// ip runs the ip command (iproute2) with args; its error names the
// command and says what ip printed.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// namespaceExists reports whether network namespace ns exists.
func namespaceExists(ns string) bool {
	_, err := os.Stat("/run/netns/" + ns)
	return err == nil
}
