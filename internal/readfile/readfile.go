// Package readfile reads the files onic is handed — scenarios, specs,
// images, keys, trust stores, captures — with the checks every such read
// needs: the path must name a regular file (not a FIFO that would block,
// nor a device such as /dev/zero that never ends), no larger than a limit
// the caller documents. Opening never blocks: a FIFO is refused, not
// waited on.
package readfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Open opens path for reading if it is a regular file of at most limit
// bytes, and returns it with its size. The error names the path and the
// rule it breaks.
func Open(path string, limit int64) (*os.File, int64, error) {
	// O_NONBLOCK: opening a FIFO with no writer returns at once instead
	// of waiting; it is then refused as not a regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("%s: %w", path, pe.Err) // "x.yaml: no such file or directory"
		}
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file (%s)", path, kind(st.Mode()))
	}
	if st.Size() > limit {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %d bytes, more than the %s allowed", path, st.Size(), Size(limit))
	}
	return f, st.Size(), nil
}

// Read reads the whole of path, a regular file of at most limit bytes. A
// file that grows past the limit while it is read is refused too.
func Read(path string, limit int64) ([]byte, error) {
	f, size, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 0, size+1)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			return nil, fmt.Errorf("%s: more than the %s allowed (it grew while read)", path, Size(limit))
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// Size formats a byte count the way limits are documented: "64 MiB".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	}
	return m.Type().String()
}

// ParseSize parses a byte count with its unit — B, KiB, MiB, GiB, TiB, or
// KB, MB, GB, TB as powers of ten, a space before it allowed — that must
// be from lo to hi bytes.
func ParseSize(s string, lo, hi int64) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	for _, u := range units {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
		if err != nil || n < 0 || n > hi/u.mult || n*u.mult < lo {
			return 0, fmt.Errorf("%q: want a whole number of bytes from %s to %s, with a unit (B, KiB, MiB, GiB)", s, Size(lo), Size(hi))
		}
		return n * u.mult, nil
	}
	return 0, fmt.Errorf("%q: a size needs a unit: B, KiB, MiB or GiB", s)
}
