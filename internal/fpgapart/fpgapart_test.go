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
