package cardsim

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"onic/emu/cluster"
	"onic/emu/hostif"
	"onic/emu/scenario"
)

// buildOn builds cfg's cluster, with the O-NICs named in cards (all when
// none are) as their generated cards when rtl is set.
func buildOn(t *testing.T, cfg scenario.Config, rtl bool, cards ...string) *cluster.Cluster {
	t.Helper()
	if !rtl {
		cl, err := cluster.Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	cl, _ := buildSet(t, cfg, cards...)
	return cl
}

// buildSet builds cfg's cluster with the O-NICs named in cards (all when
// none) as their cards, and returns the cards too.
func buildSet(t *testing.T, cfg scenario.Config, cards ...string) (*cluster.Cluster, *Set) {
	t.Helper()
	cl, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewSet(cfg, cards)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.UseHardware(set); err != nil {
		t.Fatal(err)
	}
	return cl, set
}

// serve serves cl over a Unix socket in lock-step, as onic emu serve
// does; stop ends the server.
func serve(t *testing.T, cl *cluster.Cluster) (socket string, stop func()) {
	t.Helper()
	srv, err := hostif.New(cl, hostif.Options{})
	if err != nil {
		t.Fatal(err)
	}
	socket = filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	return socket, func() {
		cancel()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
	}
}
