// Package fpgapart checks the form of an AMD FPGA part name
// (xcvu9p-flga2104-2L-e): device, package, speed grade and temperature
// grade, letters and digits joined by hyphens. A part name is written
// into Vivado Tcl (set part ...), so nothing else may pass: no spaces,
// brackets, semicolons, quotes or newlines.
package fpgapart

import (
	"fmt"
	"regexp"
	"strings"
)

var form = regexp.MustCompile(`^[A-Za-z0-9]{2,32}(-[A-Za-z0-9]{1,16}){0,4}$`)

// Check returns an error naming the rule unless name has a part name's
// form. It does not say whether the part exists.
func Check(name string) error {
	if !form.MatchString(name) {
		return fmt.Errorf("%q: not an FPGA part name (letters and digits in up to five hyphen-joined fields, as xcvu9p-flga2104-2L-e)", name)
	}
	return nil
}

// Family is the device family of part name, as Yosys's synth_xilinx
// -family names it: "xcup" for UltraScale+ (Virtex, Kintex and Zynq
// UltraScale+, and the Alveo cards' xcu parts), "xcu" for UltraScale,
// "xc7" for the 7 series; "" when the name says none of these.
func Family(name string) string {
	d := strings.ToLower(name)
	if i := strings.IndexByte(d, '-'); i >= 0 {
		d = d[:i]
	}
	switch {
	case strings.HasPrefix(d, "xc7"):
		return "xc7"
	case strings.HasPrefix(d, "xczu"), strings.HasPrefix(d, "xcu") && len(d) > 3 && d[3] >= '0' && d[3] <= '9':
		// Zynq UltraScale+ MPSoCs and RFSoCs; the Alveo parts (xcu200,
		// xcu250, xcu280, xcu50, xcu55c) are Virtex UltraScale+ dies.
		return "xcup"
	case (strings.HasPrefix(d, "xcvu") || strings.HasPrefix(d, "xcku")) && strings.HasSuffix(strings.TrimRight(d, "0123456789"), "p"):
		return "xcup" // xcvu9p, xcku15p
	case strings.HasPrefix(d, "xcvu"), strings.HasPrefix(d, "xcku"):
		return "xcu" // xcvu095, xcku040
	}
	return ""
}
