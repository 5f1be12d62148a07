package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"onic/hdlgen/check"
	"onic/hdlgen/verilog"
	"onic/kernels"
)

// timingModel names the delay model and the synthesis script behind a
// cached estimate: change it when either changes, and old results are
// not reused.
const timingModel = "synth_xilinx-flatten/v2"

// kernelTiming is the clock estimate of kernel k alone (its bare module,
// as `onic kernel gen --bare` writes it): Yosys synth_xilinx and the
// critical path by hdlgen/check's delay model. Results are kept in
// cacheDir (if not "") keyed by the SHA-256 of the Verilog, so a kernel
// is synthesised once per change.
func kernelTiming(k *kernels.Kernel, cacheDir string) (check.Resources, error) {
	m, err := k.Module()
	if err != nil {
		return check.Resources{}, err
	}
	files, err := verilog.EmitDesign(m)
	if err != nil {
		return check.Resources{}, err
	}
	h := sha256.New()
	h.Write([]byte(timingModel))
	for _, f := range files {
		fmt.Fprintf(h, "\x00%s\x00%d\x00", f.Name, len(f.Source))
		h.Write(f.Source)
	}
	key := ""
	if cacheDir != "" {
		key = filepath.Join(cacheDir, hex.EncodeToString(h.Sum(nil))+".json")
		var r check.Resources
		if b, err := os.ReadFile(key); err == nil && json.Unmarshal(b, &r) == nil && r.Module == m.Name() {
			return r, nil
		}
	}
	if _, err := exec.LookPath("yosys"); err != nil {
		return check.Resources{}, fmt.Errorf("yosys is not installed (make deps installs it)")
	}
	dir, err := os.MkdirTemp("", "onic-timing")
	if err != nil {
		return check.Resources{}, err
	}
	defer os.RemoveAll(dir)
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Source, 0o644); err != nil {
			return check.Resources{}, err
		}
	}
	r, err := check.Synth(dir, m.Name())
	if err != nil {
		return check.Resources{}, err
	}
	if key != "" && os.MkdirAll(cacheDir, 0o755) == nil {
		b, _ := json.Marshal(r)
		_ = os.WriteFile(key, b, 0o644) // a cache that cannot be written is only slower
	}
	return r, nil
}

// timingCacheDir is where kernel test keeps its estimates: onic/timing in
// the user's cache directory ("" when there is none).
func timingCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "onic", "timing")
}
