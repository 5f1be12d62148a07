package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"onic/pcie"
	"onic/tlp"
	"onic/tlp/pcap"
)

// onic runs the CLI in-process and returns its exit code, stdout and stderr.
func onic(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

type vector struct{ name, hex string }

// loadVectors reads the hand-checked vectors the tlp package keeps in step
// with its tests.
func loadVectors(t *testing.T) []vector {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "tlp", "testdata", "vectors.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vs []vector
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, hex, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("bad vectors line %q", line)
		}
		vs = append(vs, vector{name, hex})
	}
	if len(vs) < 18 {
		t.Fatalf("only %d vectors", len(vs))
	}
	return vs
}

// TestRoundTripEveryKind: every vector decodes to JSON that encode turns
// back into the same hex, through arguments and through stdin.
func TestRoundTripEveryKind(t *testing.T) {
	kinds := map[string]bool{}
	for _, v := range loadVectors(t) {
		code, js, errs := onic(t, "", "tlp", "decode", v.hex)
		if code != 0 || errs != "" {
			t.Fatalf("%s: decode exit %d: %s", v.name, code, errs)
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(js), &obj); err != nil {
			t.Fatalf("%s: decode printed invalid JSON %q: %v", v.name, js, err)
		}
		kinds[obj["kind"].(string)] = true
		code, hex, errs := onic(t, js, "tlp", "encode")
		if code != 0 || strings.TrimSpace(hex) != v.hex {
			t.Fatalf("%s: encode exit %d, %q (%s), want %s", v.name, code, hex, errs, v.hex)
		}
		code, js2, _ := onic(t, v.hex+"\n", "tlp", "decode")
		if code != 0 || js2 != js {
			t.Fatalf("%s: stdin decode differs: %q vs %q", v.name, js2, js)
		}
		code, text, _ := onic(t, "", "tlp", "decode", "--text", v.hex)
		if code != 0 || !strings.HasPrefix(text, obj["kind"].(string)) || strings.Count(text, "\n") != 1 {
			t.Fatalf("%s: --text printed %q", v.name, text)
		}
	}
	if len(kinds) != 18 {
		t.Errorf("vectors cover %d kinds, want all 18: %v", len(kinds), kinds)
	}
}

// TestPcapThroughCLI: encode --pcap writes a capture that decode --pcap
// reads back with the same TLPs, times and taps, and whose JSON encodes to
// a byte-identical capture.
func TestPcapThroughCLI(t *testing.T) {
	dir := t.TempDir()
	vs := loadVectors(t)
	var in strings.Builder
	for i, v := range vs {
		_, js, _ := onic(t, "", "tlp", "decode", v.hex)
		js = strings.TrimSuffix(strings.TrimSpace(js), "}") + `,"time_ns":` + strings.Repeat("1", i%5+1) + `,"tap":` + string(rune('0'+i%10)) + `,"direction":"up"}`
		in.WriteString(js + "\n")
	}
	p1, p2 := filepath.Join(dir, "a.pcap"), filepath.Join(dir, "b.pcap")
	if code, _, errs := onic(t, in.String(), "tlp", "encode", "--pcap", p1); code != 0 {
		t.Fatalf("encode --pcap: %s", errs)
	}
	code, js, errs := onic(t, "", "tlp", "decode", "--pcap", p1)
	if code != 0 {
		t.Fatalf("decode --pcap: %s", errs)
	}
	if js != in.String() {
		t.Fatalf("capture round trip changed the JSON:\n got %s\nwant %s", js, in.String())
	}
	if code, _, errs := onic(t, js, "tlp", "encode", "--pcap", p2); code != 0 {
		t.Fatalf("re-encode: %s", errs)
	}
	a, _ := os.ReadFile(p1)
	b, _ := os.ReadFile(p2)
	if !bytes.Equal(a, b) {
		t.Fatal("re-encoding the decoded capture changed its bytes")
	}
}

// TestSnappedThroughCLI: an emulator capture's generator writes are
// snapped to their headers; decode --pcap shows them so (JSON "snapped",
// text "payload not captured"), encode --pcap writes the same capture
// back, and encode without --pcap refuses them, naming the line.
func TestSnappedThroughCLI(t *testing.T) {
	dir := t.TempDir()
	p1, p2 := filepath.Join(dir, "run.pcap"), filepath.Join(dir, "copy.pcap")
	if code, _, errs := onic(t, "", "emu", "run", "--duration", "3us", "--pcap", p1); code != 0 {
		t.Fatalf("emu run --pcap: %s", errs)
	}
	code, js, errs := onic(t, "", "tlp", "decode", "--pcap", p1)
	if code != 0 || !strings.Contains(js, `"snapped":true`) || strings.Contains(js, `"data"`) {
		t.Fatalf("decode --pcap: exit %d %s\n%.600s", code, errs, js)
	}
	if _, text, _ := onic(t, "", "tlp", "decode", "--pcap", p1, "--text"); !strings.Contains(text, "MWr64") || !strings.Contains(text, "(payload not captured)") {
		t.Errorf("decode --text:\n%.400s", text)
	}
	code, hex, errs := onic(t, js, "tlp", "encode", "--pcap", p2)
	if code != 0 || !strings.HasPrefix(hex, "# ") || !strings.Contains(hex, "(snapped: the header only") {
		t.Fatalf("encode --pcap: exit %d %s\n%.300s", code, errs, hex)
	}
	// The emulator's capture is pcapng, encode writes pcap: the same
	// records, in order (time, tap, direction, bytes, snapped or not).
	a, _ := os.ReadFile(p1)
	b, _ := os.ReadFile(p2)
	ra, err := pcap.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	rb, err := pcap.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; ; n++ {
		var x, y tlp.TLP
		ea, errA := ra.Next(&x)
		eb, errB := rb.Next(&y)
		if errA == io.EOF && errB == io.EOF {
			break
		}
		if errA != nil || errB != nil || ea.At != eb.At || ea.Tap != eb.Tap || !bytes.Equal(ea.Raw, eb.Raw) || x.Snapped != y.Snapped {
			t.Fatalf("decode | encode --pcap: record %d differs: %+v %v / %+v %v", n, ea, errA, eb, errB)
		}
	}
	first := js[:strings.Index(js, "\n")+1]
	if code, _, errs := onic(t, first, "tlp", "encode"); code != 1 || !strings.Contains(errs, "line 1: snapped: its payload was not captured") {
		t.Errorf("encode of a snapped TLP without --pcap: exit %d %q", code, errs)
	}
}

func TestBadInput(t *testing.T) {
	// Files with mistakes in them, for the cases below.
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badLanes := write("lanes.yaml", "name: x\nhosts:\n  - name: A\n    lanes: abc\n    mps: zz\n")
	listKey := write("trust.yaml", "keys:\n  - {name: a, key: [1], role: operator}\n")
	noKeys := write("empty-trust.yaml", "keys: []\n")
	pcapPath := filepath.Join(dir, "demo.pcap")
	if code, _, errs := onic(t, "", "tlp", "demo", "--pcap", pcapPath); code != 0 {
		t.Fatal(errs)
	}
	pcapBytes, err := os.ReadFile(pcapPath)
	if err != nil {
		t.Fatal(err)
	}
	cutPcap := write("cut.pcap", string(pcapBytes[:len(pcapBytes)-7]))
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  []string // substrings of the one-line error
	}{
		{"odd hex", "", []string{"tlp", "decode", "4000001"}, []string{"argument 1", "odd number of hex digits"}},
		{"not hex", "", []string{"tlp", "decode", "4000000g0100050ffedc001011223344"}, []string{"argument 1", `'g' is not a hex digit`}},
		{"truncated", "", []string{"tlp", "decode", "40000001 0100050f fedc0010"}, []string{"argument 1", "truncated-payload", "§2.2.2"}},
		{"malformed header line", "# comment\n\n40000001 0100050f fedc0010 11223344\n00000002 010005ff 00000ffc\n", []string{"tlp", "decode"}, []string{"line 4", "cross-4k", "§2.2.7"}},
		{"reserved type", "", []string{"tlp", "decode", "03000001 0100050f fedc0010"}, []string{"reserved-fmt-type"}},
		{"ECRC", "", []string{"tlp", "decode", "40008001 0100050f fedc0010 11223344 00000000"}, []string{"ecrc", "§2.7.1"}},
		{"unknown field", `{"kind":"MRd","length":1,"address":"0x10","colour":"red"}`, []string{"tlp", "encode"}, []string{"line 1", "field colour: unknown field"}},
		{"impossible value", `{"kind":"MRd","length":1,"address":"0x10","tc":9}`, []string{"tlp", "encode"}, []string{"line 1", "field-range", "tc 9"}},
		{"too big for field", `{"kind":"MRd","length":1,"address":"0x10","tc":300}`, []string{"tlp", "encode"}, []string{"field tc", "300"}},
		{"no kind", `{"length":1}`, []string{"tlp", "encode"}, []string{"field kind: missing"}},
		{"bad kind", `{"kind":"MWrite"}`, []string{"tlp", "encode"}, []string{`"MWrite" is not a TLP kind`}},
		{"field not for kind", `{"kind":"MRd","length":1,"address":"0x10","byte_count":4}`, []string{"tlp", "encode"}, []string{"field byte_count: does not apply to MRd"}},
		{"rule broken on encode", `{"kind":"MRd","length":2,"address":"0xffc","first_be":15,"last_be":15}`, []string{"tlp", "encode"}, []string{"cross-4k"}},
		{"malformed JSON", `{"kind":`, []string{"tlp", "encode"}, []string{"line 1", "malformed JSON"}},
		{"bad address", `{"kind":"MRd","length":1,"address":"ten"}`, []string{"tlp", "encode"}, []string{"field address", `"ten" is not a number`}},
		{"bad id", `{"kind":"MRd","length":1,"address":"0x10","requester_id":"1:2"}`, []string{"tlp", "encode"}, []string{"field requester_id"}},
		{"missing pcap", "", []string{"tlp", "decode", "--pcap", "/nonexistent/x.pcap"}, []string{"/nonexistent/x.pcap"}},
		{"not a pcap", "", []string{"tlp", "decode", "--pcap", "main_test.go"}, []string{"main_test.go", "pcap"}},
		{"unknown flag", "", []string{"tlp", "decode", "--bogus"}, []string{"unknown flag: --bogus", "onic tlp decode --help"}},
		{"unknown command", "", []string{"tlp", "frobnicate"}, []string{"frobnicate"}},
		{"demo bad gen", "", []string{"tlp", "demo", "--gen", "7"}, []string{"--gen 7"}},
		{"demo bad mps", "", []string{"tlp", "demo", "--mps", "100"}, []string{"--mps 100"}},
		{"missing config", "", []string{"--config", "/nonexistent.yaml", "tlp", "decode", "00000001 0100050f 00001000"}, []string{"config /nonexistent.yaml"}},
		// Files that are not regular files are refused by name, never read
		// for ever.
		{"device as scenario", "", []string{"emu", "run", "--scenario-file", "/dev/zero"}, []string{"/dev/zero: not a regular file"}},
		{"device as image", "", []string{"fw", "inspect", "/dev/zero"}, []string{"/dev/zero: not a regular file"}},
		{"device as key", "", []string{"fw", "verify", "--pub", "/dev/zero", "/dev/null"}, []string{"not a regular file"}},
		{"device as trust store", "", []string{"emu", "run", "--deploy", "onicA=x.img", "--trust", "/dev/zero"}, []string{"--trust: /dev/zero: not a regular file"}},
		{"NaN clock", "", []string{"hdl", "gen", "--clock", "NaN", "--out", "/nonexistent/rtl"}, []string{"--clock NaN: must be 1 to 1000 MHz"}},
		{"huge clock", "", []string{"hdl", "gen", "--clock", "1e9", "--out", "/nonexistent/rtl"}, []string{"--clock 1e+09: must be 1 to 1000 MHz"}},
		{"device as config", "", []string{"--config", "/dev/zero", "pcie", "tree"}, []string{"config /dev/zero: not a regular file"}},
		{"device as topology", "", []string{"pcie", "tree", "--topology", "/dev/zero"}, []string{"topology /dev/zero: not a regular file"}},
		// Library text rewritten to name the field or record once.
		{"flag not a number", "", []string{"emu", "linkbench", "--lanes", "abc"}, []string{`--lanes "abc": not a whole number`}},
		{"flag out of range", "", []string{"emu", "linkbench", "--lanes", "99999999999999999999"}, []string{`--lanes "99999999999999999999": out of range`}},
		{"flag not a duration", "", []string{"emu", "run", "--duration", "5x"}, []string{`--duration "5x": not a duration: want a number with a unit`}},
		{"deploy time", "", []string{"emu", "run", "--deploy", "onicA=x.onicfw@5q", "--trust", noKeys}, []string{`@5q: not a simulated time (a number with a unit`}},
		{"YAML not a number", "", []string{"emu", "run", "--scenario-file", badLanes}, []string{`hosts[0].lanes: "abc" is not a whole number`, `hosts[0].mps: "zz" is not a whole number`}},
		{"YAML wrong shape", "", []string{"emu", "run", "--deploy", "onicA=x.onicfw", "--trust", listKey}, []string{"keys[0].key: want a string, not a list"}},
		{"cut pcap", "", []string{"tlp", "decode", "--pcap", cutPcap}, []string{"cut.pcap: pcap record "}},
		{"device as pcap", "", []string{"tlp", "decode", "--pcap", "/dev/null"}, []string{"/dev/null: not a regular file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := onic(t, tc.stdin, tc.args...)
			if code != 1 {
				t.Fatalf("exit code %d, want 1 (stderr %q)", code, errs)
			}
			if strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "onic: ") {
				t.Fatalf("stderr is not one line starting with 'onic: ': %q", errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			// No parser's own words, no prefix said twice.
			for _, leak := range []string{"strconv.", "time: ", "decoding failed", "unconvertible", "error(s)", "interface {}"} {
				if strings.Contains(errs, leak) {
					t.Errorf("stderr %q leaks %q", errs, leak)
				}
			}
			if regexp.MustCompile(`pcap record \d+: pcap record`).MatchString(errs) {
				t.Errorf("stderr %q names the record twice", errs)
			}
		})
	}
}

func TestKeepGoing(t *testing.T) {
	in := "40000001 0100050f fedc0010 11223344\nzz\n00000002 010005ff 00000ffc\n00000001 0100050f 00001000\n"
	code, out, errs := onic(t, in, "tlp", "decode", "--keep-going", "--text")
	if code != 1 {
		t.Fatalf("exit %d, want 1 after bad lines", code)
	}
	if got := strings.Count(out, "\n"); got != 2 {
		t.Fatalf("printed %d TLPs, want the 2 good ones:\n%s", got, out)
	}
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "line 2") || !strings.Contains(lines[1], "line 3: cross-4k") || !strings.Contains(lines[2], "2 bad TLP(s)") {
		t.Fatalf("stderr:\n%s", errs)
	}
	// --lax decodes the rule-breaking TLP instead.
	code, out, _ = onic(t, "00000002 010005ff 00000ffc\n", "tlp", "decode", "--lax", "--text")
	if code != 0 || !strings.HasPrefix(out, "MRd32") {
		t.Fatalf("--lax: exit %d, %q", code, out)
	}
	// encode --keep-going likewise.
	code, out, errs = onic(t, `{"kind":"MRd","length":1,"address":"0x10","first_be":15}`+"\n{}\n", "tlp", "encode", "--keep-going", "--dw")
	if code != 1 || out != "00000001 0000000f 00000010\n" || !strings.Contains(errs, "line 2") {
		t.Fatalf("encode --keep-going: exit %d out %q err %q", code, out, errs)
	}
}

func TestEnvironmentOverride(t *testing.T) {
	t.Setenv("ONIC_TLP_DECODE_TEXT", "true")
	code, out, _ := onic(t, "", "tlp", "decode", "00000001 0100050f 00001000")
	if code != 0 || !strings.HasPrefix(out, "MRd32 ") {
		t.Fatalf("ONIC_TLP_DECODE_TEXT=true: exit %d, %q", code, out)
	}
}

func TestConfigFile(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "onic.yaml")
	if err := os.WriteFile(cfg, []byte("tlp:\n  decode:\n    text: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := onic(t, "", "--config", cfg, "tlp", "decode", "00000001 0100050f 00001000")
	if code != 0 || !strings.HasPrefix(out, "MRd32 ") {
		t.Fatalf("config file: exit %d, %q %s", code, out, errs)
	}
	// A key that is no setting is an error naming it, never ignored.
	for _, c := range []struct{ src, want string }{
		{"emu:\n  run:\n    scenaro: phased\n", "emu.run.scenaro: no such setting; did you mean emu.run.scenario?"},
		{"nothing:\n  like:\n    this: 1\n", "nothing.like.this: no such setting (settings are <area>.<command>.<flag>"},
	} {
		if err := os.WriteFile(cfg, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := onic(t, "", "--config", cfg, "tlp", "decode", "00000001 0100050f 00001000")
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("config %q: exit %d, %q", c.src, code, errs)
		}
	}
}

func TestExplicitECRCIsKept(t *testing.T) {
	// A deliberately wrong digest passes through encode --lax unchanged, and
	// decode then reports it.
	js := `{"kind":"MWr","td":true,"first_be":15,"address":"0x10","data":"11223344","ecrc":"0x00000000"}`
	code, hex, errs := onic(t, js, "tlp", "encode", "--lax")
	if code != 0 || !strings.HasSuffix(strings.TrimSpace(hex), "00000000") {
		t.Fatalf("exit %d %q %s", code, hex, errs)
	}
	if code, _, errs := onic(t, "", "tlp", "decode", strings.TrimSpace(hex)); code != 1 || !strings.Contains(errs, "ecrc") {
		t.Fatalf("bad digest not reported: %d %s", code, errs)
	}
	// Without ecrc the digest is computed and decode accepts it.
	js = `{"kind":"MWr","td":true,"first_be":15,"address":"0x10","data":"11223344"}`
	_, hex, _ = onic(t, js, "tlp", "encode")
	if code, _, errs := onic(t, "", "tlp", "decode", strings.TrimSpace(hex)); code != 0 {
		t.Fatalf("computed digest rejected: %s", errs)
	}
}

func TestHelpEverywhere(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"tlp", "--help"}, {"tlp", "decode", "--help"}, {"tlp", "encode", "--help"}, {"tlp", "demo", "--help"},
		{"fw", "--help"}, {"fw", "keygen", "--help"}, {"fw", "build", "--help"}, {"fw", "sign", "--help"}, {"fw", "inspect", "--help"},
		{"fw", "verify", "--help"}, {"fw", "diff", "--help"}, {"fw", "pack", "--help"}, {"fw", "costs", "--help"}} {
		code, out, errs := onic(t, "", args...)
		if code != 0 || !strings.Contains(out, "Usage:") || errs != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	code, out, _ := onic(t, "", "--version")
	if code != 0 || !strings.HasPrefix(out, "onic version ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	if code, v, _ := onic(t, "", "version"); code != 0 || v != out {
		t.Errorf("onic version: exit %d, %q; --version said %q", code, v, out)
	}
	if code, _, errs := onic(t, "", "emu", "rnu"); code != 1 || !strings.Contains(errs, `unknown command "rnu" for "onic emu"; did you mean run?`) {
		t.Errorf("a misspelt command: exit %d, %q", code, errs)
	}
	// From the build information: module version, revision, time, and
	// whether the tree had changes.
	bi := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "2f012852e603a5367e837eedbf1702aa2730ef5a"},
		{Key: "vcs.time", Value: "2026-11-24T05:37:25Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := describeBuild(bi), "devel (git 2f012852e603, 2026-11-24T05:37:25Z, modified)"; got != want {
		t.Errorf("describeBuild: %q, want %q", got, want)
	}
	if got := describeBuild(&debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}); got != "v0.3.0 (no VCS revision: built with -buildvcs=false or outside a checkout)" {
		t.Errorf("describeBuild without VCS: %q", got)
	}
}

// TestDemoDeterministic: the demonstration checks every TLP it shows, and
// two runs give identical output and identical captures.
func TestDemoDeterministic(t *testing.T) {
	dir := t.TempDir()
	var outs [2]string
	var caps [2][]byte
	for i := range outs {
		p := filepath.Join(dir, "demo"+string(rune('0'+i))+".pcap")
		code, out, errs := onic(t, "", "tlp", "demo", "--pcap", p)
		if code != 0 {
			t.Fatalf("demo: %s", errs)
		}
		outs[i] = strings.ReplaceAll(out, p, "FILE")
		caps[i], _ = os.ReadFile(p)
	}
	if outs[0] != outs[1] || !bytes.Equal(caps[0], caps[1]) {
		t.Fatal("two demo runs differ")
	}
	for _, want := range []string{"6 MWr", "2 MRd, answered by 3 CplD", "11 TLPs read back and checked", "MWr64", "CplD"} {
		if !strings.Contains(outs[0], want) {
			t.Errorf("demo output lacks %q:\n%s", want, outs[0])
		}
	}
	// The capture decodes through the CLI too.
	code, out, errs := onic(t, "", "tlp", "decode", "--pcap", filepath.Join(dir, "demo0.pcap"), "--text")
	if code != 0 || strings.Count(out, "\n") != 11 {
		t.Fatalf("decode of the demo capture: %d %q %s", code, out, errs)
	}
}

// TestJSONListings: kernel list, emu scenarios and pcie tree print JSON
// with --json that says what their text says.
func TestJSONListings(t *testing.T) {
	decode := func(v any, args ...string) {
		t.Helper()
		code, out, errs := onic(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
		if err := json.Unmarshal([]byte(out), v); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	var ks []struct {
		Name, In, Out, ID string
		Inputs            int
		BeatBits          int `json:"beat_bits"`
	}
	decode(&ks, "kernel", "list", "--json")
	found := false
	for _, k := range ks {
		if k.Name == "fp32-to-bf16" {
			found = k.In == "fp32" && k.Out == "bf16" && k.Inputs == 1 && k.BeatBits == 512 && strings.HasPrefix(k.ID, "0x")
		}
	}
	if !found {
		t.Errorf("kernel list --json: %+v", ks)
	}
	var ss []struct{ Name, Description string }
	decode(&ss, "emu", "scenarios", "--json")
	if len(ss) < 6 || ss[0].Name == "" || ss[0].Description == "" {
		t.Errorf("emu scenarios --json: %+v", ss)
	}
	type fn struct {
		ID       string
		VendorID string `json:"vendor_id"`
	}
	type node struct {
		Name, Kind string
		Functions  []fn
		Children   []node
	}
	var root node
	decode(&root, "pcie", "tree", "--json")
	var onic *fn
	var walk func(n node)
	walk = func(n node) {
		for i, f := range n.Functions {
			if n.Kind == "endpoint" && f.VendorID == fmt.Sprintf("%04x", pcie.ONICVendorID) {
				onic = &n.Functions[i]
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	if root.Kind != "root-complex" || onic == nil || !regexp.MustCompile(`^[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`).MatchString(onic.ID) {
		t.Errorf("pcie tree --json: no O-NIC endpoint found in %+v", root)
	}
}
