package check

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"onic/testbenches/tools"
)

// TestSynthCache: a synthesis is kept under a key of everything it
// depends on and answered from there the next time — shown by editing
// the kept result, which the next Synth then returns — while a changed
// source, or ONIC_SYNTH_CACHE=off, runs Yosys again.
func TestSynthCache(t *testing.T) {
	tools.Long(t)
	tools.Require(t, "yosys")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	src := filepath.Join(dir, "acc.v")
	const acc = "module acc(input clk, input [7:0] d, output reg [7:0] q);\n  always @(posedge clk) q <= q + d;\nendmodule\n"
	if err := os.WriteFile(src, []byte(acc), 0o644); err != nil {
		t.Fatal(err)
	}
	first, err := Synth(dir, "acc")
	if err != nil {
		t.Fatal(err)
	}
	if first.FF != 8 || first.LUT == 0 {
		t.Fatalf("acc: %+v, want 8 flip-flops and some LUTs", first)
	}
	key := cachePath([]string{src}, "acc", Options{})
	b, err := os.ReadFile(key)
	if err != nil {
		t.Fatalf("no kept result: %v", err)
	}
	var kept Resources
	if err := json.Unmarshal(b, &kept); err != nil || kept != first {
		t.Fatalf("kept %+v (%v), synthesised %+v", kept, err, first)
	}
	kept.LUT = 9999
	b, _ = json.Marshal(kept)
	if err := os.WriteFile(key, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if again, err := Synth(dir, "acc"); err != nil || again.LUT != 9999 {
		t.Errorf("second Synth: %+v %v, want the kept result", again, err)
	}
	t.Setenv(CacheEnv, "off")
	if off, err := Synth(dir, "acc"); err != nil || off != first {
		t.Errorf("with %s=off: %+v %v, want %+v", CacheEnv, off, err, first)
	}
	t.Setenv(CacheEnv, "")
	if err := os.WriteFile(src, []byte(acc+"// changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := Synth(dir, "acc"); err != nil || changed.LUT == 9999 {
		t.Errorf("a changed source: %+v %v, want a new synthesis", changed, err)
	}
}
