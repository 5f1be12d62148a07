package fpgapart

import "testing"

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"xcvu9p-flga2104-2L-e", true},
		{"xcu250-figd2104-2L-e", true},
		{"xcvu9p", true},
		{"", false},
		{"xcvu9p-flga2104-2L-e; exec rm -rf /", false},
		{"xcvu9p-flga2104-2L-e\nputs hi", false},
		{"xcvu9p-[exec id]", false},
		{"xcvu9p--e", false},
		{"xcvu9p-a-b-c-d-e", false},
		{"\"xcvu9p\"", false},
	} {
		if err := Check(tc.name); (err == nil) != tc.ok {
			t.Errorf("Check(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

func TestFamily(t *testing.T) {
	for part, want := range map[string]string{
		"xcvu9p-flga2104-2L-e": "xcup", "xcu250-figd2104-2L-e": "xcup", "xcu55c-fsvh2892-2L-e": "xcup",
		"xczu9eg-ffvb1156-2-e": "xcup", "xcku15p-ffve1517-2-e": "xcup", "xcvu095-ffva2104-2-e": "xcu",
		"xcku040-ffva1156-2-e": "xcu", "xc7vx690t-ffg1761-2": "xc7", "xc7a35t": "xc7", "lfe5u-85f": "",
	} {
		if got := Family(part); got != want {
			t.Errorf("Family(%q) = %q, want %q", part, got, want)
		}
	}
}
