// Command onic is the toolchain and emulator for FPGA optical NICs: PCIe
// over optical ports through a MEMS switch, with an FPGA PCIe manager and
// in-network kernels. `onic --help` lists its areas; package onic/cli is
// the command line itself.
package main

import (
	"os"

	"onic/cli"
)

func main() { os.Exit(cli.Main()) }
