package tools

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

func TestInCI(t *testing.T) {
	for v, want := range map[string]bool{"true": true, "1": true, "TRUE": true, "false": false, "0": false, "": false, "yes": false} {
		t.Setenv("CI", v)
		if got := InCI(); got != want {
			t.Errorf("CI=%q: InCI() = %v, want %v", v, got, want)
		}
	}
}

// fakeTB records how Require ended a test without ending this one.
type fakeTB struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (f *fakeTB) Helper() {}

// Fatal and Skip end the calling goroutine, as the real ones do.
func (f *fakeTB) Fatal(args ...any) { f.failed = true; f.msg = args[0].(string); runtime.Goexit() }
func (f *fakeTB) Skip(args ...any)  { f.skipped = true; f.msg = args[0].(string); runtime.Goexit() }

// require runs Require on a fake in its own goroutine and reports how it
// ended.
func require(name string) *fakeTB {
	return ending(func(f *fakeTB) { Require(f, name) })
}

// ending runs call on a fake in its own goroutine and reports how it
// ended.
func ending(call func(*fakeTB)) *fakeTB {
	f := &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		call(f)
	}()
	<-done
	return f
}

func TestRequireFile(t *testing.T) {
	const missing = "/nonexistent/onic-no-such-header.h"
	t.Setenv("CI", "true")
	if f := ending(func(f *fakeTB) { RequireFile(f, missing, "libx-dev") }); !f.failed || !strings.Contains(f.msg, "libx-dev") {
		t.Errorf("CI=true: a missing file must fail the test naming its package (failed=%v msg=%q)", f.failed, f.msg)
	}
	t.Setenv("CI", "")
	if f := ending(func(f *fakeTB) { RequireFile(f, missing, "libx-dev") }); !f.skipped || f.failed {
		t.Errorf("outside CI: a missing file must skip the test (failed=%v skipped=%v)", f.failed, f.skipped)
	}
	if f := ending(func(f *fakeTB) { RequireFile(f, "/", "base-files") }); f.failed || f.skipped {
		t.Errorf("an existing file ended the test: %q", f.msg)
	}
}

func TestRequireMissingTool(t *testing.T) {
	const missing = "onic-no-such-tool"
	if _, err := exec.LookPath(missing); err == nil {
		t.Skip(missing + " exists on this machine")
	}
	t.Setenv("CI", "true")
	if f := require(missing); !f.failed || f.skipped {
		t.Errorf("CI=true: a missing tool must fail the test (failed=%v skipped=%v)", f.failed, f.skipped)
	}
	t.Setenv("CI", "")
	f := require(missing)
	if !f.skipped || f.failed {
		t.Errorf("outside CI: a missing tool must skip the test (failed=%v skipped=%v)", f.failed, f.skipped)
	}
	if f.msg == "" {
		t.Error("no message saying how to install the tool")
	}
}

func TestRequireFindsInstalledTool(t *testing.T) {
	if p := Require(t, "sh"); p == "" {
		t.Fatal("Require(sh) returned no path")
	}
}
