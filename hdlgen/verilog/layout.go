package verilog

import (
	"regexp"
	"strings"
)

// The layout layer under the printer: the printer writes each statement
// on one line, and layout wraps those longer than WrapWidth at the
// outermost operator or comma that has one, continuing aligned under the
// expression's start — as a reviewer would break them by hand.

// WrapWidth is the column the printer keeps statements within where an
// expression has somewhere to break.
const WrapWidth = 100

// wrappable are the statements layout wraps: a continuous assignment, a
// register's nonblocking assignment, an instance's port connection and
// an if's condition, as prefix, expression and suffix (with any trailing
// comment).
var wrappable = []*regexp.Regexp{
	regexp.MustCompile(`^(\s*assign [\w$]+(?:\[[^\]]*\])? = )(.*)(;(?:\s*//.*)?)$`),
	regexp.MustCompile(`^(\s*[\w$]+(?:\[[^\]]*\])* <= )(.*)(;(?:\s*//.*)?)$`),
	regexp.MustCompile(`^(\s*\.[\w$]+\()(.*)(\),?)$`),
	regexp.MustCompile(`^(\s*(?:end else )?if \()(.*)(\) begin)$`),
}

// layout wraps src's long statements.
func layout(src []byte) []byte {
	lines := strings.Split(string(src), "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if len(l) <= WrapWidth {
			out = append(out, l)
			continue
		}
		wrapped := false
		for _, re := range wrappable {
			if m := re.FindStringSubmatch(l); m != nil {
				out = append(out, wrapExpr(m[1], m[2], m[3], continuation(m[1]))...)
				wrapped = true
				break
			}
		}
		if !wrapped {
			out = append(out, l)
		}
	}
	return []byte(strings.Join(out, "\n"))
}

// continuation is the indent of an expression's further lines: under
// its start, or a step in from the statement when that is far right.
func continuation(prefix string) string {
	if len(prefix) <= 48 {
		return strings.Repeat(" ", len(prefix))
	}
	return strings.Repeat(" ", len(prefix)-len(strings.TrimLeft(prefix, " "))+8)
}

// breaks are the operators an expression may break before; a comma
// breaks after.
var breaks = []string{" || ", " && ", " | ", " & ", " ^ ", " + ", " - ", " ? ", " : ", " == ", " != ", " < ", " > ", " <= ", " >= "}

// split cuts expr at its shallowest breaks: before an operator, after a
// comma. It returns nil when expr has nowhere to break.
func split(expr string) []string {
	type cut struct{ at, depth int }
	var cuts []cut
	depth, least := 0, -1
	for i := 0; i < len(expr); i++ {
		switch expr[i] {
		case '(', '{', '[':
			depth++
			continue
		case ')', '}', ']':
			depth--
			continue
		case ',':
			if i+1 < len(expr) && expr[i+1] == ' ' {
				cuts = append(cuts, cut{i + 1, depth})
			}
		case ' ':
			for _, op := range breaks {
				if strings.HasPrefix(expr[i:], op) {
					cuts = append(cuts, cut{i, depth})
					break
				}
			}
		default:
			continue
		}
		if n := len(cuts); n > 0 && cuts[n-1].at >= i && (least < 0 || depth < least) {
			least = depth
		}
	}
	if least < 0 {
		return nil
	}
	var pieces []string
	from := 0
	for _, c := range cuts {
		if c.depth == least {
			pieces = append(pieces, expr[from:c.at])
			from = c.at + 1 // (the space)
		}
	}
	return append(pieces, expr[from:])
}

// wrapExpr lays out prefix, expr and suffix within WrapWidth where it
// can: expr's shallowest pieces packed greedily, further lines starting
// with cont; a piece that alone is too long is wrapped inside in turn.
func wrapExpr(prefix, expr, suffix, cont string) []string {
	if len(prefix)+len(expr)+len(suffix) <= WrapWidth {
		return []string{prefix + expr + suffix}
	}
	pieces := split(expr)
	if len(pieces) < 2 {
		return []string{prefix + expr + suffix}
	}
	var lines []string
	start, cur := prefix, ""
	flush := func(end string) {
		if len(start)+len(cur)+len(end) > WrapWidth && cur != "" {
			// One piece that does not fit: wrap it inside, its further
			// lines just inside its opening brackets.
			body := cur
			for _, op := range breaks {
				if op = op[1:]; strings.HasPrefix(cur, op) {
					body = cur[len(op):] // (a piece that starts with its operator)
					break
				}
			}
			lead := len(cur) - len(strings.TrimLeft(body, "({"))
			lines = append(lines, wrapExpr(start, cur, end, strings.Repeat(" ", len(start)+lead))...)
		} else {
			lines = append(lines, start+cur+end)
		}
		start, cur = cont, ""
	}
	for i, p := range pieces {
		end := ""
		if i == len(pieces)-1 {
			end = suffix
		}
		switch {
		case cur == "":
			cur = p
		case len(start)+len(cur)+1+len(p)+len(end) <= WrapWidth:
			cur += " " + p
		default:
			flush("")
			cur = p
		}
	}
	flush(suffix)
	return lines
}
