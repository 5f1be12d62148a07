package firmware

import (
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFileReaders: every reader of a file a user names refuses what is
// not a regular file (a FIFO would block it, /dev/zero would exhaust
// memory) and files over its documented size, naming the path and rule.
func TestFileReaders(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	bigKey := filepath.Join(dir, "big.pem")
	if err := os.WriteFile(bigKey, make([]byte, MaxKeyFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	trustWith := func(key string) string {
		p := filepath.Join(dir, "trust-"+filepath.Base(key)+".yaml")
		if err := os.WriteFile(p, []byte("keys:\n  - {name: ops, role: operator, key: "+key+"}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	readers := map[string]func(string) error{
		"ReadFile":       func(p string) error { _, err := ReadFile(p); return err },
		"ReadPublicKey":  func(p string) error { _, err := ReadPublicKey(p); return err },
		"ReadPrivateKey": func(p string) error { _, err := ReadPrivateKey(p); return err },
		"LoadTrustFile":  func(p string) error { _, err := LoadTrustFile(p); return err },
		"LoadSpecFile":   func(p string) error { _, err := LoadSpecFile(p); return err },
		"trust key file": func(p string) error { _, err := LoadTrustFile(trustWith(p)); return err },
	}
	for name, read := range readers {
		for path, want := range map[string]string{
			"/dev/zero": "/dev/zero: not a regular file (a character device)",
			fifo:        "fifo: not a regular file (a FIFO)",
			dir:         "not a regular file (a directory)",
		} {
			done := make(chan error, 1)
			go func() { done <- read(path) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s(%s): %v, want one line with %q", name, path, err, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s(%s) blocked", name, path)
			}
		}
	}
	for _, read := range []string{"ReadPublicKey", "trust key file"} {
		if err := readers[read](bigKey); err == nil || !strings.Contains(err.Error(), "more than the 64 KiB allowed") {
			t.Errorf("%s of a %d-byte key: %v", read, MaxKeyFile+1, err)
		}
	}
}

// TestTrustDuplicateNames: two keys with one name would make reports
// ambiguous about who signed ("ops" the tenant key shown as the
// operator): refused.
func TestTrustDuplicateNames(t *testing.T) {
	a := base64.StdEncoding.EncodeToString(make([]byte, ed25519.PublicKeySize))
	b := base64.StdEncoding.EncodeToString(append(make([]byte, ed25519.PublicKeySize-1), 1))
	src := "keys:\n  - {name: ops, role: operator, key: " + a + "}\n  - {name: ops, role: ml, key: " + b + "}\n"
	_, err := LoadTrust("t.yaml", strings.NewReader(src), ".")
	if err == nil || !strings.Contains(err.Error(), `t.yaml: keys[1].name: "ops" is already keys[0]`) {
		t.Errorf("duplicate names: %v", err)
	}
}

// FuzzLoadTrust: no trust store source makes LoadTrust panic; it loads or
// returns a one-line error, and every key it accepts has a name, a role
// and a 32-byte key.
func FuzzLoadTrust(f *testing.F) {
	a := base64.StdEncoding.EncodeToString(make([]byte, ed25519.PublicKeySize))
	f.Add([]byte("keys:\n  - {name: ops, role: operator, key: " + a + "}\n"))
	f.Add([]byte("keys:\n  - {name: ops, role: operator, key: testdata/none.pem}\n"))
	f.Add([]byte("keys: [{name: x}]"))
	f.Fuzz(func(t *testing.T, src []byte) {
		tr, err := LoadTrust("fuzz.yaml", strings.NewReader(string(src)), t.TempDir())
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a multi-line error: %q", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, k := range tr.Keys {
			if k.Name == "" || k.Role == "" || len(k.pub) != ed25519.PublicKeySize || seen[k.Name] {
				t.Fatalf("accepted %+v", k)
			}
			seen[k.Name] = true
		}
	})
}

// TestSpecStrict: a spec's numbers are read as strictly as a scenario's:
// NaN, a fraction or an explicit 0 for a defaulted field is an error.
func TestSpecStrict(t *testing.T) {
	base, err := os.ReadFile("testdata/onic-a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ to, want string }{
		{"clock_mhz: .nan", "clock_mhz: NaN is not a finite number"},
		{"clock_mhz: 0", "clock_mhz: 0 is not a value here"},
		{"clock_mhz: 2.5e2\nwidth: 511.5", "width: 511.5 is not a whole number"},
		{"clock_mhz: 250\nwidth: 512\nhold_tlps: 0", "hold_tlps: 0 is not a value here"},
	} {
		src := strings.Replace(string(base), "clock_mhz: 250\nwidth: 512", tc.to, 1)
		_, err := LoadSpec("s.yaml", strings.NewReader(src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.to, err, tc.want)
		}
	}
}
