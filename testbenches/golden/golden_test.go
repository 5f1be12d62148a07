package golden

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDiff(t *testing.T) {
	got := Diff("a\nb\nc\n", "a\nB\nc\n")
	want := " a\n-b\n+B\n c\n"
	if got != want {
		t.Fatalf("Diff:\n%s\nwant:\n%s", got, want)
	}
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Check(t, path, "same\n") // must not fail
	ft := &fakeT{TB: t}
	Check(ft, path, "other\n")
	if !ft.failed {
		t.Fatal("Check accepted output that differs from the golden file")
	}
}

type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()                        {}
func (f *fakeT) Fatalf(format string, a ...any) { f.failed = true }
