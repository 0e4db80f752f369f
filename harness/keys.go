package harness

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Key is a WireGuard Curve25519 key, private or public.
type Key [32]byte

// GenerateKey returns a new private key.
func GenerateKey() (Key, error) {
	pk, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return Key{}, err
	}
	return Key(pk.Bytes()), nil
}

// Public returns the public key of a private key.
func (k Key) Public() Key {
	pk, err := ecdh.X25519().NewPrivateKey(k[:])
	if err != nil { // cannot happen: every 32-byte string is an X25519 key
		panic(err)
	}
	return Key(pk.PublicKey().Bytes())
}

// String is the base64 form used by wg(8) and in key files.
func (k Key) String() string { return base64.StdEncoding.EncodeToString(k[:]) }

func (k Key) hex() string { return hex.EncodeToString(k[:]) }

// ParseKey parses the base64 form of a key.
func ParseKey(s string) (Key, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != len(Key{}) {
		return Key{}, fmt.Errorf("harness: not a base64 WireGuard key")
	}
	return Key(b), nil
}

// ReadKeyFile reads a key file as written by WriteKeyFile or wg genkey.
func ReadKeyFile(path string) (Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Key{}, err
	}
	k, err := ParseKey(string(b))
	if err != nil {
		return Key{}, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// WriteKeyFile writes k in base64 with a newline, readable by its owner only.
func WriteKeyFile(path string, k Key) error {
	return os.WriteFile(path, []byte(k.String()+"\n"), 0o600)
}

// LoadOrCreateKeyFile loads the private key at path, generating and writing
// it first if the file does not exist; an empty path generates a key and
// writes nothing.
func LoadOrCreateKeyFile(path string) (Key, error) {
	if path == "" {
		return GenerateKey()
	}
	k, err := ReadKeyFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if k, err = GenerateKey(); err == nil {
			err = WriteKeyFile(path, k)
		}
	}
	return k, err
}

// ReadKey reads a key given in base64 or as the path of a file holding it,
// as a role's --peer flag takes it.
func ReadKey(v string) (Key, error) {
	if k, err := ParseKey(v); err == nil {
		return k, nil
	}
	return ReadKeyFile(v)
}
