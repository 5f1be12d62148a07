package card

import (
	"testing"

	"onic/designs/internal/optlink"
	"onic/testbenches/verilator"
)

// TestFailCardLint: a card under the fail policy — its egress buffers
// in front of the links (failBuffer) where a hold card has its hold
// buffers — is lint-free under Verilator -Wall, as the hold card the
// bundle's goldens hold is.
func TestFailCardLint(t *testing.T) {
	link, err := optlink.Module(optlink.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := withRegisters(config(t, 0))
	c.Hold = false
	verilator.Lint(t, stallCard(t, "onic_card_fail", c, link, 4096))
}
