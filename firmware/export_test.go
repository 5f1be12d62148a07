package firmware

// Raw and SetRaw give the external tests (package firmware_test, which
// builds images with firmware/build) the manifest bytes the signatures
// cover, to tamper with.
func (im *Image) Raw() []byte { return im.raw }

// SetRaw replaces the manifest bytes without re-encoding the manifest.
func (im *Image) SetRaw(b []byte) { im.raw = b }
