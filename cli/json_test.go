package cli

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// noResult are the commands that print no result a script would parse
// as JSON: groups, a server's own protocol, a decoder whose output is
// JSON already, an encoder whose output is hex or a capture.
var noResult = map[string]bool{
	"onic": true, "onic emu": true, "onic fw": true, "onic hdl": true, "onic kernel": true, "onic pcie": true, "onic tlp": true,
	"onic tlp decode": true, "onic tlp encode": true, "onic pcie dump": true,
}

// TestJSONEverywhere: every command that produces a result takes --json
// (issue 43), and the ones this package can run in a moment print one
// JSON document with it.
func TestJSONEverywhere(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			walk(sub)
		}
		if !noResult[c.CommandPath()] && c.Flags().Lookup("json") == nil {
			t.Errorf("%s has no --json", c.CommandPath())
		}
	}
	walk(newRootCmd(strings.NewReader(""), io.Discard, io.Discard))
	dir := t.TempDir()
	for _, args := range [][]string{
		{"version"},
		{"hdl", "demo", "--out", filepath.Join(dir, "demo")},
		{"kernel", "gen", "sum-int32", "--out", filepath.Join(dir, "k")},
		{"tlp", "demo"},
		{"kernel", "list"},
	} {
		code, out, errs := onic(t, "", append(args, "--json")...)
		var doc any
		if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
			t.Errorf("onic %s --json: exit %d %s\n%.300s", strings.Join(args, " "), code, errs, out)
		}
	}
}

// TestVersionEverywhere: --version works on every command, before its
// arguments are checked, and says what onic version says.
func TestVersionEverywhere(t *testing.T) {
	_, want, _ := onic(t, "", "version")
	if !strings.HasPrefix(want, "onic version ") {
		t.Fatalf("onic version: %q", want)
	}
	for _, args := range [][]string{{"--version"}, {"emu", "run", "--version"}, {"fw", "costs", "--version"}, {"hdl", "--version"}} {
		if code, out, errs := onic(t, "", args...); code != 0 || out != want {
			t.Errorf("onic %s: exit %d %q %q, want %q", strings.Join(args, " "), code, out, errs, want)
		}
	}
}
