package harness

import (
	"path/filepath"
	"testing"
)

func TestKeysFromFilesAndFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "client.key")
	k, err := LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadOrCreateKeyFile(path)
	if err != nil || again != k {
		t.Fatalf("a second load: %v, %v; want the key written the first time", again, err)
	}
	pubFile := filepath.Join(t.TempDir(), "client.pub")
	if err := WriteKeyFile(pubFile, k.Public()); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{k.Public().String(), pubFile} {
		if got, err := ReadKey(v); err != nil || got != k.Public() {
			t.Errorf("ReadKey(%q) = %v, %v", v, got, err)
		}
	}
	if _, err := ReadKey("neither a key nor a file"); err == nil {
		t.Error("ReadKey of garbage succeeded")
	}
}

func TestResolveUDP(t *testing.T) {
	for _, s := range []string{"127.0.0.1:51820", "localhost:51820"} {
		ap, err := ResolveUDP(t.Context(), s)
		if err != nil || ap.String() != "127.0.0.1:51820" {
			t.Errorf("ResolveUDP(%q) = %v, %v", s, ap, err)
		}
	}
	if _, err := ResolveUDP(t.Context(), "no port"); err == nil {
		t.Error("an address without a port resolved")
	}
}
