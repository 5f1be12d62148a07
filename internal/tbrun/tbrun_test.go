package tbrun

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"onic/testbenches/tools"
)

// TestIcarus: a testbench that logs through a design module gives its
// lines back; a design that does not compile is an error naming the
// tool, with its message.
func TestIcarus(t *testing.T) {
	iverilog, vvp := tools.Require(t, "iverilog"), tools.Require(t, "vvp")
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("add.v", "module add(input wire [7:0] a, output wire [7:0] y); assign y = a + 8'd1; endmodule\n")
	write("tb.v", `module tb;
  reg [7:0] a; wire [7:0] y; integer f;
  add dut(.a(a), .y(y));
  initial begin
    f = $fopen("out.log", "w");
    a = 8'd41; #1 $fdisplay(f, "%0d", y);
    a = 8'd255; #1 $fdisplay(f, "  %0d  ", y);
    $fclose(f); $finish;
  end
endmodule
`)
	got, err := Icarus(dir, []string{"add.v"}, iverilog, vvp)
	if err != nil || !reflect.DeepEqual(got, []string{"42", "0"}) {
		t.Fatalf("log %q, %v", got, err)
	}
	write("add.v", "module add(input wire a; endmodule\n")
	if _, err := Icarus(dir, []string{"add.v"}, iverilog, vvp); err == nil || !strings.HasPrefix(err.Error(), "iverilog: ") || !strings.Contains(err.Error(), "add.v") {
		t.Errorf("a broken design: %v", err)
	}
}
