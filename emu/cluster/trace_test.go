package cluster

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"onic/emu/scenario"
)

type traceEvent struct {
	Ph, Name, Cat string
	Pid, Tid      int
	Ts, Dur       float64
	Args          map[string]any
}

// TestTrace: the phased run's trace holds one slice per transfer on its
// flow's track, a MEMS slice of exactly the 11 ms stall, and counters
// whose integral is the payload of the finished transfers; it is the same
// bytes every run.
func TestTrace(t *testing.T) {
	write := func() ([]byte, Report) {
		cl, err := Build(scenario.Phased())
		if err != nil {
			t.Fatal(err)
		}
		r, err := cl.Run()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := cl.WriteTrace(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes(), r
	}
	raw, r := write()
	var tr struct {
		TraceEvents []traceEvent
	}
	if err := json.Unmarshal(raw, &tr); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	slices, ok, gbit := map[string]int{}, map[string]int{}, map[string]float64{}
	bucketUs := scenario.Phased().Duration.Seconds() * 1e6 / TraceBuckets
	var mems []traceEvent
	for _, e := range tr.TraceEvents {
		switch {
		case e.Ph == "X" && e.Cat == "transfer":
			slices[e.Name]++
			if e.Args["state"] == "ok" {
				ok[e.Name]++
			}
			if e.Dur <= 0 || e.Pid != 1 {
				t.Errorf("transfer slice %+v", e)
			}
		case e.Ph == "X" && e.Cat == "mems":
			mems = append(mems, e)
		case e.Ph == "C":
			gbit[e.Name] += e.Args["Gbps"].(float64) * bucketUs * 1e-6
		}
	}
	for _, f := range r.Flows {
		if ok[f.Name] != f.Transfers || slices[f.Name] < f.Transfers {
			t.Errorf("%s: %d slices, %d ok, report %+v", f.Name, slices[f.Name], ok[f.Name], f)
		}
		want := float64(f.Transfers) * 64 * 1024 * 8 / 1e9
		if got := gbit[f.Name+" Gb/s"]; math.Abs(got-want) > 1e-3*want {
			t.Errorf("%s: counters integrate to %.6f Gbit, transfers %.6f", f.Name, got, want)
		}
	}
	if len(mems) != 1 || mems[0].Ts != 100 || mems[0].Dur != 11000 || mems[0].Name != "onicA.a <-> onicC.a" {
		t.Errorf("MEMS slices %+v", mems)
	}
	if again, _ := write(); !bytes.Equal(raw, again) {
		t.Error("two runs wrote different traces")
	}
}

// TestProgress: a progress function hears the run advance to its end and
// does not change the results.
func TestProgress(t *testing.T) {
	c := scenario.TwoParty()
	c.Duration = 20 * time.Microsecond
	plain := run(t, c)
	cl, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	var last time.Duration
	cl.OnProgress(func(done, total time.Duration) {
		if done < last || total != c.Duration {
			t.Fatalf("progress %v of %v after %v", done, total, last)
		}
		calls, last = calls+1, done
	})
	r, err := cl.Run()
	if err != nil {
		t.Fatal(err)
	}
	if calls != ProgressSteps || last != c.Duration {
		t.Errorf("%d calls, last %v", calls, last)
	}
	r.Speed, plain.Speed = Speed{}, Speed{}
	a, _ := json.Marshal(r)
	b, _ := json.Marshal(plain)
	if !bytes.Equal(a, b) {
		t.Errorf("progress changed the report:\n%s\n%s", a, b)
	}
}
