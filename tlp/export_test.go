package tlp

// What the capture tests (package tlp_test, with onic/tlp/capture) use of
// this package's own test helpers.

// Vector is a hand-assembled TLP of the vectors table.
type Vector struct {
	Name, Hex string
	Want      TLP
}

// Vectors returns the vectors table.
func Vectors() []Vector {
	var vs []Vector
	for _, v := range vectors {
		vs = append(vs, Vector{v.name, v.hex, v.want})
	}
	return vs
}

var (
	MustHex     = mustHex
	EqualFields = equalFields
	RandomTLP   = randomTLP
)

// LengthDefined is Kind.lengthDefined.
func LengthDefined(k Kind) bool { return k.lengthDefined() }
