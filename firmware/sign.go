package firmware

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"

	"onic/internal/readfile"
)

// SignContext prefixes the manifest's bytes in every signature, so an
// onic firmware signature cannot be replayed as a signature over anything
// else the same key signs.
const SignContext = "onic-firmware-manifest-v1\x00"

// GenerateKey makes a developer key pair from rand.
func GenerateKey(rand io.Reader) (ed25519.PublicKey, ed25519.PrivateKey, error) {
	return ed25519.GenerateKey(rand)
}

// MarshalPrivateKey is a private key as PEM ("PRIVATE KEY", PKCS #8): the
// form `openssl genpkey -algorithm ed25519` writes, so either tool's keys
// work with the other.
func MarshalPrivateKey(k ed25519.PrivateKey) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil { // only for key types other than ed25519
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// MarshalPublicKey is a public key as PEM ("PUBLIC KEY", PKIX).
func MarshalPublicKey(k ed25519.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// ParsePrivateKey reads a PEM ed25519 private key.
func ParsePrivateKey(b []byte) (ed25519.PrivateKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, errors.New("not a PEM \"PRIVATE KEY\" block")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("a %T, not an ed25519 key", k)
	}
	return ek, nil
}

// ParsePublicKey reads a PEM ed25519 public key.
func ParsePublicKey(b []byte) (ed25519.PublicKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return nil, errors.New("not a PEM \"PUBLIC KEY\" block")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	ek, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("a %T, not an ed25519 key", k)
	}
	return ek, nil
}

// MaxKeyFile is the largest key file onic reads: a PEM ed25519 key is
// under 200 bytes.
const MaxKeyFile = 64 << 10

// ReadPrivateKey and ReadPublicKey read key files (regular files of at
// most MaxKeyFile bytes), naming the file in their errors.
func ReadPrivateKey(path string) (ed25519.PrivateKey, error) {
	b, err := readfile.Read(path, MaxKeyFile)
	if err != nil {
		return nil, err
	}
	k, err := ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return k, nil
}

// ReadPublicKey reads a public key file.
func ReadPublicKey(path string) (ed25519.PublicKey, error) {
	b, err := readfile.Read(path, MaxKeyFile)
	if err != nil {
		return nil, err
	}
	k, err := ParsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return k, nil
}

// KeyID is a short name for a public key: the first 8 bytes of its
// SHA-256, in hex.
func KeyID(k ed25519.PublicKey) string {
	h := sha256.Sum256(k)
	return hex.EncodeToString(h[:8])
}

// Sign adds a signature by k over the image's manifest.
func (im *Image) Sign(k ed25519.PrivateKey) {
	pub := k.Public().(ed25519.PublicKey)
	sig := ed25519.Sign(k, append([]byte(SignContext), im.raw...))
	for i, s := range im.Signatures {
		if string(s.Key) == string(pub) {
			im.Signatures[i].Sig = sig
			return
		}
	}
	im.Signatures = append(im.Signatures, Signature{Key: pub, Sig: sig})
}

// Signers are the keys whose signatures over the manifest are valid, in
// the image's order. A signature that does not verify is an error, not
// skipped: an image carrying a bad signature has been tampered with.
func (im *Image) Signers() ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	for i, s := range im.Signatures {
		if len(s.Key) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("signature %d: key is %d bytes, not %d", i, len(s.Key), ed25519.PublicKeySize)
		}
		if !ed25519.Verify(s.Key, append([]byte(SignContext), im.raw...), s.Sig) {
			return nil, fmt.Errorf("signature %d (key %s): does not verify over the manifest", i, KeyID(s.Key))
		}
		keys = append(keys, ed25519.PublicKey(s.Key))
	}
	return keys, nil
}
