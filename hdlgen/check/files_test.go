package check

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestVFilesRegularOnly: a FIFO or a directory named *.v is refused by
// name before any tool is started (a FIFO would block the first one to
// open it for ever), as is an empty directory.
func TestVFilesRegularOnly(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.v"), []byte("module a; endmodule\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fs, err := vFiles(dir); err != nil || len(fs) != 1 {
		t.Fatalf("one regular file: %v %v", fs, err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "b.v"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := vFiles(dir); err == nil || !strings.Contains(err.Error(), "b.v: not a regular file") {
		t.Errorf("a FIFO: %v", err)
	}
	if _, err := LintDir(dir, nil); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("LintDir with a FIFO: %v", err)
	}
	sub := t.TempDir()
	if err := os.Mkdir(filepath.Join(sub, "c.v"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := vFiles(sub); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := vFiles(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no .v files") {
		t.Errorf("empty: %v", err)
	}
}
