package verilog

import (
	"strings"
	"testing"

	"onic/hdlgen/ir"
)

// TestDescribe: an interface's description goes before its first port
// only, as comment lines filled to the wrap width, and the port list's
// commas stay on the ports.
func TestDescribe(t *testing.T) {
	m := ir.NewModule("described")
	m.Describe("s_", "The input stream: "+strings.Repeat("words that fill more than one line of the port list, ", 3))
	m.Describe("m_", "The output.")
	v := m.Input("s_data", 8)
	ok := m.Input("s_valid", 1)
	m.Output("m_data", v)
	m.Output("m_valid", ok)
	src, err := Emit(m)
	if err != nil {
		t.Fatal(err)
	}
	_, ports, _ := strings.Cut(string(src), "module described (\n")
	ports, _, _ = strings.Cut(ports, ");")
	lines := strings.Split(strings.TrimSuffix(ports, "\n"), "\n")
	var comments []string
	for i, l := range lines {
		if strings.HasPrefix(l, "    // ") {
			comments = append(comments, l)
			if len(l) > WrapWidth {
				t.Errorf("comment line of %d columns: %q", len(l), l)
			}
			continue
		}
		if !strings.HasSuffix(l, ",") && i != len(lines)-1 {
			t.Errorf("port line without its comma: %q", l)
		}
	}
	if len(comments) < 3 || !strings.HasPrefix(comments[0], "    // The input stream:") || comments[len(comments)-1] != "    // The output." {
		t.Fatalf("comments %q in\n%s", comments, src)
	}
	if !strings.Contains(ports, "// The output.\n    output wire [7:0] m_data,\n    output wire m_valid") {
		t.Errorf("the output's description is not before its first port:\n%s", ports)
	}
	if n := strings.Count(ports, "// The output."); n != 1 {
		t.Errorf("the output's description printed %d times", n)
	}
}
