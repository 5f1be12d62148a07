package bundle

// RunFlow runs build.tcl src against the mocked Vivado (runFlowSrc), for
// the external tests.
var RunFlow = runFlowSrc
