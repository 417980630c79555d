package dht

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/libp2p/go-libp2p/core/crypto"
)

// identityFile is the name of the key file inside Config.DataDir.
const identityFile = "identity.key"

// loadIdentity returns the node's private key: read from dir/identity.key,
// or generated (Ed25519) and written there (mode 0600) on first start. An
// empty dir gives a fresh key that is not stored.
func loadIdentity(dir string) (crypto.PrivKey, error) {
	if dir == "" {
		return generateKey()
	}
	path := filepath.Join(dir, identityFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createIdentity(dir, path)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrIdentity, err)
	}
	k, err := crypto.UnmarshalPrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrIdentity, path, err)
	}
	return k, nil
}

func generateKey() (crypto.PrivKey, error) {
	k, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("%w: generate: %v", ErrIdentity, err)
	}
	return k, nil
}

// createIdentity generates a key and writes it to path atomically (temp
// file, fsync, rename), so a crash never leaves a truncated key behind.
func createIdentity(dir, path string) (crypto.PrivKey, error) {
	k, err := generateKey()
	if err != nil {
		return nil, err
	}
	b, err := crypto.MarshalPrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("%w: marshal: %v", ErrIdentity, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrIdentity, err)
	}
	if err := writeFileAtomic(path, b, 0o600); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrIdentity, err)
	}
	return k, nil
}

func writeFileAtomic(path string, b []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".identity-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // no-op after a successful rename
	if err := writeSync(f, b, mode); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func writeSync(f *os.File, b []byte, mode os.FileMode) error {
	_, err := f.Write(b)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
