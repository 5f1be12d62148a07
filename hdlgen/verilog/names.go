package verilog

import (
	"strconv"
	"strings"
)

// keywords are the reserved words of Verilog-2005 and SystemVerilog
// (IEEE 1364-2005 Annex B, IEEE 1800-2017 Annex B): a name that is one gets
// a suffix, so the output reads the same in any tool.
var keywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`
accept_on alias always always_comb always_ff always_latch and assert assign assume automatic before begin bind
bins binsof bit break buf bufif0 bufif1 byte case casex casez cell chandle checker class clocking cmos config
const constraint context continue cover covergroup coverpoint cross deassign default defparam design disable
dist do edge else end endcase endchecker endclass endclocking endconfig endfunction endgenerate endgroup
endinterface endmodule endpackage endprimitive endprogram endproperty endspecify endsequence endtable endtask
enum event eventually expect export extends extern final first_match for force foreach forever fork forkjoin
function generate genvar global highz0 highz1 if iff ifnone ignore_bins illegal_bins implements implies import
incdir include initial inout input inside instance int integer interconnect interface intersect join join_any
join_none large let liblist library local localparam logic longint macromodule matches medium modport module
nand negedge nettype new nexttime nmos nor noshowcancelled not notif0 notif1 null or output package packed
parameter pmos posedge primitive priority program property protected pull0 pull1 pulldown pullup
pulsestyle_ondetect pulsestyle_onevent pure rand randc randcase randsequence rcmos real realtime ref reg
reject_on release repeat restrict return rnmos rpmos rtran rtranif0 rtranif1 s_always s_eventually s_nexttime
s_until s_until_with scalared sequence shortint shortreal showcancelled signed small soft solve specify
specparam static string strong strong0 strong1 struct super supply0 supply1 sync_accept_on sync_reject_on
table tagged task this throughout time timeprecision timeunit tran tranif0 tranif1 tri tri0 tri1 triand trior
trireg type typedef union unique unique0 unsigned until until_with untyped use uwire var vectored virtual void
wait wait_order wand weak weak0 weak1 while wildcard wire with within wor xnor xor`) {
		keywords[k] = true
	}
}

// namer hands out legal, unique Verilog identifiers.
type namer struct {
	used map[string]bool
}

// legal makes s a legal identifier: letters, digits, _ and $, not starting
// with a digit or $, not a keyword.
func legal(s string) string {
	var b strings.Builder
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '$')
		if !ok && i == 0 && r >= '0' && r <= '9' {
			b.WriteString("n_")
			ok = true
		}
		if ok {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" {
		out = "n"
	}
	if keywords[out] {
		out += "_"
	}
	return out
}

// name returns a unique legal identifier based on want.
func (n *namer) name(want string) string {
	base := legal(want)
	s := base
	for i := 2; n.used[s]; i++ {
		s = base + "_" + strconv.Itoa(i)
	}
	n.used[s] = true
	return s
}
