// Package fpgapart checks the form of an AMD FPGA part name
// (xcvu9p-flga2104-2L-e): device, package, speed grade and temperature
// grade, letters and digits joined by hyphens. A part name is written
// into Vivado Tcl (set part ...), so nothing else may pass: no spaces,
// brackets, semicolons, quotes or newlines.
package fpgapart

import (
	"fmt"
	"regexp"
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
