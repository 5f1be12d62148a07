package readfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string
	}{
		{small, ""},
		{big, "big: 2048 bytes, more than the 1 KiB allowed"},
		{fifo, "fifo: not a regular file (a FIFO)"},
		{"/dev/zero", "/dev/zero: not a regular file (a character device)"},
		{dir, "not a regular file (a directory)"},
		{filepath.Join(dir, "none"), "no such file"},
	} {
		done := make(chan struct{})
		var b []byte
		var err error
		go func() { b, err = Read(tc.path, 1024); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Read blocked", tc.path)
		}
		switch {
		case tc.want == "" && (err != nil || string(b) != "hello"):
			t.Errorf("%s: %q %v", tc.path, b, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.path, err, tc.want)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{64 << 20: "64 MiB", 1 << 30: "1 GiB", 1000: "1000 bytes", 4096: "4 KiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
