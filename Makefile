# onic — the README's two commands are `make run` and `make test`; both pull
# in what they need from `deps`, so they are the whole set-up on a fresh
# Debian machine with Go.

GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 30s
BIN         := bin/onic

# command:package pairs for the external tools the tests drive.
TOOLS := iverilog:iverilog verilator:verilator ccache:ccache yosys:yosys lspci:pciutils tshark:tshark gcc:gcc vcd2fst:gtkwave chromium:chromium tclsh:tcl ip:iproute2 ping:iputils-ping iperf3:iperf3 nc:netcat-openbsd sbatch:slurm-wlm slurmctld:slurm-wlm slurmd:slurm-wlm munged:munge
# header:package pairs for the C libraries the C host-interface client
# (emu/hostif/c) builds against.
HEADERS := /usr/include/msgpack.h:libmsgpack-dev

.PHONY: all run test check bench fuzz soak lint deps deps-go deps-tools build clean

all: build

## deps: Go modules, then the Debian packages of any missing tool (idempotent).
deps: deps-go deps-tools

deps-go:
	$(GO) mod download

deps-tools:
	@missing=""; \
	for pair in $(TOOLS); do \
	  cmd=$${pair%%:*}; pkg=$${pair##*:}; \
	  command -v $$cmd >/dev/null 2>&1 || missing="$$missing $$pkg"; \
	done; \
	for pair in $(HEADERS); do \
	  [ -e $${pair%%:*} ] || missing="$$missing $${pair##*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  echo "installing:$$missing"; \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	else \
	  echo "external tools present: iverilog verilator ccache yosys lspci tshark gcc gtkwave (vcd2fst) chromium tclsh ip ping iperf3 nc slurm munge msgpack-c"; \
	fi

build: deps-go
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/onic

## run: build onic and run its main job on the embedded default config.
run: build
	./$(BIN) emu run

## test: every test (unit, property, fuzz seeds, CLI, external tools) plus lint.
test: deps lint
	$(GO) test -count=1 -timeout 20m $$($(GO) list ./... | grep -v '/emu/ipnet$$')
	@# Real-time networking (ping, TCP through emulated O-NICs paced to the
	@# wall clock) runs alone, so that its timings are the emulator's.
	$(GO) test -count=1 -timeout 5m ./emu/ipnet

## check: the quick loop while editing (about a minute on 2 cores): gofmt, go
## vet, staticcheck, and every test with -short, which leaves the long ones (external-tool
## runs, whole-card simulations, the docs' journeys; tools.Long) to make test.
## make test runs everything; CI runs make test.
check: deps-go
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) test -short -count=1 ./...

## bench: every benchmark, with allocation counts; the simulator's against
## Verilator (docs/hdl.md, "Speed against Verilator") need the tools.
bench: deps
	$(GO) test -run '^$$' -bench . -benchmem -count=$${COUNT:-1} ./...

## fuzz: each fuzz target for FUZZTIME (default 30s). Minimising a new
## interesting input is capped at FUZZMINTIME (Go's default, 60s, lets
## targets with large inputs spend their whole run minimising); each
## target's last "fuzz: elapsed" line gives its executions.
FUZZMINTIME ?= 2s
fuzz: deps-go
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== fuzz $$pkg $$f ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) \
	      -fuzzminimizetime $(FUZZMINTIME) $$pkg; \
	  done; \
	done

## soak: long co-simulation of the generated PCIe manager against the
## emulator's model (SOAK_SEEDS seeds of SOAK_TLPS TLPs per configuration in
## the IR simulator, SOAK_HDL of them also under Icarus and Verilator).
SOAK_SEEDS ?= 300
SOAK_TLPS  ?= 2000
SOAK_HDL   ?= 10
## Then two whole generated cards joined over an errored fibre
## (SOAK_CARD_REQUESTS requests across and back, card A replayed under Icarus
## and Verilator), and the host-interface server's memory bound over 100 k
## connection cycles and 1 M register writes (docs/hostif.md). And one card
## with its host and both peers sending at once (SOAK_INGRESS_TLPS each), and
## the offload scenario's whole first task through a kernel slot, replayed.
SOAK_CARD_REQUESTS ?= 2000
SOAK_INGRESS_TLPS ?= 30000
## And a link layer against a hostile partner (SOAK_HOSTILE fault sequences),
## two whole cards whose link and fibre misbehave (SOAK_HOSTILE_CARDS), and
## the emulator's O-NIC under the same kinds of faults (SOAK_HOSTILE_MODEL per
## down policy).
SOAK_HOSTILE ?= 20000
SOAK_HOSTILE_CARDS ?= 10000
SOAK_HOSTILE_MODEL ?= 20000
## And random host-interface sessions served on the Go model and on the
## generated cards (onic emu serve --rtl), compared result for result, and
## the cards compiled at run time against the interpreted ones.
SOAK_RTL_SESSIONS ?= 200
## And random link-partner fault sequences on the model and on the cards
## (SOAK_RTL_FAULTS sequences in one run, for each down policy), every
## board top synthesised with Yosys (docs/hdl.md, "Board tops"), and the
## transfer level against the packet level with the three-party scenario
## at full size.
SOAK_RTL_FAULTS ?= 300
soak: deps
	$(GO) test -count=1 -timeout 0 -run 'TestCosim' ./testbenches/cosim -v \
	  -seeds $(SOAK_SEEDS) -tlps $(SOAK_TLPS) -hdl-seeds $(SOAK_HDL) | grep -v '^=== RUN'
	$(GO) test -count=1 -timeout 0 -run 'TestTwoFullCards' ./designs/internal/card -v \
	  -requests $(SOAK_CARD_REQUESTS) | grep -v '^=== RUN'
	$(GO) test -count=1 -timeout 0 -run 'TestEveryIngressAgainstModel' ./designs/internal/card -v \
	  -ingress-tlps $(SOAK_INGRESS_TLPS) | grep -v '^=== RUN'
	$(GO) test -count=1 -timeout 0 -run 'TestOffloadAgainstEmulator' ./designs/internal/card -v \
	  -offload-replay 6000 | grep -v '^=== RUN'
	$(GO) test -count=1 -timeout 0 -run 'TestBoundedMemory' ./emu/hostif -v \
	  -cycles 100000 -accesses 1000000 | grep -v '^=== RUN'
	$(GO) test -count=1 -timeout 0 -run 'TestGoSourceRandom' ./hdlgen/sim -v \
	  -gosrc-modules 120 | grep -v '^=== RUN'
	$(GO) test -count=1 -timeout 0 -run 'TestHostilePartner' ./designs/internal/optlink -v \
	  -hostile-sequences $(SOAK_HOSTILE) | grep -v '^=== RUN'
	$(GO) test -count=1 -timeout 0 -run 'TestHostileCards' ./designs/internal/card -v \
	  -hostile-card-sequences $(SOAK_HOSTILE_CARDS) | grep -v '^=== RUN'
	$(GO) test -count=1 -timeout 0 -run 'TestHostileModel' ./emu/cluster -v \
	  -hostile-model-sequences $(SOAK_HOSTILE_MODEL) | grep -v '^=== RUN'
	$(GO) test -count=1 -timeout 0 -run 'TestFidelityAgainstPacket' ./emu/cluster -v \
	  -fidelity-full | grep -v '^=== RUN'
	$(GO) test -count=1 -timeout 0 -run 'TestSessionAgainstModel' ./designs/cardsim -v \
	  -session-seeds $(SOAK_RTL_SESSIONS) | grep -v '^=== RUN'
	$(GO) test -count=1 -timeout 0 -run 'TestFaultsAgainstModel' ./designs/cardsim -v \
	  -fault-sequences $(SOAK_RTL_FAULTS) | grep -v '^=== RUN'
	$(GO) test -count=1 -timeout 0 -run 'TestRTLCompiled' ./cli -v -rtl-compile | grep -v '^=== RUN'
	$(GO) test -count=1 -timeout 0 -run 'TestBoardSynth' ./designs/bundle -v -board-synth | grep -v '^=== RUN'

## lint: gofmt, go vet and staticcheck.
lint: deps-go
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

clean:
	rm -rf bin
