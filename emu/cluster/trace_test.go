package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"onic/emu/scenario"
)

type traceEvent struct {
	Ph, Name, Cat, ID string
	Pid, Tid          int
	Ts, Dur           float64
	Args              map[string]any
}

// slicesOK checks what Perfetto needs of a trace's slices: complete
// slices (X) on one track (pid, tid) either nest or do not overlap, and
// every async slice (b) has one end (e) of its id, no earlier.
func slicesOK(t *testing.T, evs []traceEvent) {
	t.Helper()
	type track struct{ pid, tid int }
	complete := map[track][]traceEvent{}
	begun := map[string]traceEvent{}
	for _, e := range evs {
		switch e.Ph {
		case "X":
			k := track{e.Pid, e.Tid}
			complete[k] = append(complete[k], e)
		case "b":
			if _, dup := begun[e.Cat+e.ID]; dup {
				t.Errorf("async slice %s %s begun twice", e.Cat, e.ID)
			}
			begun[e.Cat+e.ID] = e
		case "e":
			b, ok := begun[e.Cat+e.ID]
			if !ok || e.Ts < b.Ts || b.Name != e.Name {
				t.Errorf("async end %+v without its begin", e)
			}
			delete(begun, e.Cat+e.ID)
		}
	}
	for id := range begun {
		t.Errorf("async slice %s never ends", id)
	}
	for k, xs := range complete {
		for i, a := range xs {
			for _, b := range xs[i+1:] {
				aEnd, bEnd := a.Ts+a.Dur, b.Ts+b.Dur
				overlap := a.Ts < bEnd && b.Ts < aEnd
				nested := a.Ts <= b.Ts && bEnd <= aEnd || b.Ts <= a.Ts && aEnd <= bEnd
				if overlap && !nested {
					t.Errorf("track %v: slices %q [%g, %g] and %q [%g, %g] overlap without nesting", k, a.Name, a.Ts, aEnd, b.Name, b.Ts, bEnd)
				}
			}
		}
	}
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
	slicesOK(t, tr.TraceEvents)
	slices, ok, gbit := map[string]int{}, map[string]int{}, map[string]float64{}
	bucketUs := scenario.Phased().Duration.Seconds() * 1e6 / TraceBuckets
	var mems []traceEvent
	portStates := map[string][]string{} // port -> its state slices, in order
	sent := map[string]float64{}        // port -> Gbit sent
	begins := map[string]traceEvent{}
	for _, e := range tr.TraceEvents {
		switch {
		case e.Ph == "b":
			begins[e.Cat+e.ID] = e
		case e.Ph == "e" && e.Cat == "transfer":
			b := begins[e.Cat+e.ID]
			slices[e.Name]++
			if b.Args["state"] == "ok" {
				ok[e.Name]++
			}
			if e.Ts <= b.Ts || e.Pid != 1 {
				t.Errorf("transfer slice %+v to %+v", b, e)
			}
		case e.Ph == "e" && e.Cat == "mems":
			b := begins[e.Cat+e.ID]
			b.Dur = e.Ts - b.Ts
			mems = append(mems, b)
		case e.Ph == "C" && strings.HasSuffix(e.Name, " sent Gb/s"):
			sent[strings.TrimSuffix(e.Name, " sent Gb/s")] += e.Args["Gbps"].(float64) * bucketUs * 1e-6
		case e.Ph == "C":
			gbit[e.Name] += e.Args["Gbps"].(float64) * bucketUs * 1e-6
		case e.Ph == "X" && e.Cat == "port":
			p := e.Args["port"].(string)
			portStates[p] = append(portStates[p], fmt.Sprintf("%s@%g+%g", e.Name, e.Ts, e.Dur))
		}
	}
	for _, f := range r.Flows {
		if ok[f.Name] != f.Transfers || slices[f.Name] < f.Transfers {
			t.Errorf("%s: %d slices, %d ok, report %+v", f.Name, slices[f.Name], ok[f.Name], f)
		}
		// The counters count each TLP as it lands: every finished
		// transfer's bytes, and some of those still in flight at the end
		// (at most the flow's depth of them).
		depth := 0
		for _, fc := range scenario.Phased().Flows {
			if fc.Name == f.Name {
				depth = max(fc.Depth, 1)
			}
		}
		lo := float64(f.Transfers) * 64 * 1024 * 8 / 1e9
		hi := float64(f.Transfers+depth) * 64 * 1024 * 8 / 1e9
		if got := gbit[f.Name+" Gb/s"]; got < lo*(1-1e-3) || got > hi*(1+1e-3) {
			t.Errorf("%s: counters integrate to %.6f Gbit, finished transfers %.6f, with those in flight at most %.6f", f.Name, got, lo, hi)
		}
	}
	if len(mems) != 1 || mems[0].Ts != 100 || mems[0].Dur != 11000 || mems[0].Name != "onicA.a <-> onicC.a" {
		t.Errorf("MEMS slices %+v", mems)
	}
	// Each port's track: onicA's port A up to B, training for the 11 ms
	// the MEMS takes, up to C; B's port A up, then down; port B never up.
	for p, want := range map[string]string{
		"onicA.a": "up: onicB.a@0+100 training@100+11000 up: onicC.a@11100+200",
		"onicB.a": "up: onicA.a@0+100 down@100+11200",
		"onicC.a": "down@0+100 training@100+11000 up: onicA.a@11100+200",
		"onicA.b": "down@0+11300",
	} {
		if got := strings.Join(portStates[p], " "); got != want {
			t.Errorf("%s's track: %s, want %s", p, got, want)
		}
	}
	// What onicA's port A sent: the payload of A's finished transfers
	// and more (headers, the unfinished ones), not wildly more.
	payload := 0.0
	for _, f := range r.Flows {
		payload += float64(f.Transfers) * 64 * 1024 * 8 / 1e9
	}
	if got := sent["onicA.a"]; got < payload || got > 1.3*payload {
		t.Errorf("onicA.a sent %.6f Gbit; the flows' finished payload is %.6f", got, payload)
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
