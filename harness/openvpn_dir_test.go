//go:build unix

package harness

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A lab killed before it could remove its folder leaves its keys in the
// temporary directory; the next OpenVPN lab to start removes that folder,
// and only that one: not a live lab's (locked), not one just made (it may
// be about to be locked).
func TestNewLabDirRemovesAbandonedFolders(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	old := time.Now().Add(-2 * labDirGrace)

	live, err := newLabDir()
	if err != nil {
		t.Fatal(err)
	}
	defer live.remove()
	abandoned, err := os.MkdirTemp("", labDirPattern)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(abandoned, "ca.key"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	justMade, err := os.MkdirTemp("", labDirPattern)
	if err != nil {
		t.Fatal(err)
	}
	// A link by the pattern's name to a folder of somebody else's.
	elsewhere := t.TempDir()
	link := filepath.Join(os.TempDir(), labDirPattern+"link")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{live.path, abandoned, elsewhere} {
		if err := os.Chtimes(dir, old, old); err != nil {
			t.Fatal(err)
		}
	}

	next, err := newLabDir()
	if err != nil {
		t.Fatal(err)
	}
	defer next.remove()
	if exists(abandoned) {
		t.Errorf("the abandoned folder %s is still there", abandoned)
	}
	for _, kept := range []string{live.path, justMade, link, elsewhere, next.path} {
		if !exists(kept) {
			t.Errorf("%s was removed", kept)
		}
	}
	if removed := removeAbandonedLabDirs(time.Now()); len(removed) != 0 {
		t.Errorf("removed %v on a second pass, want nothing", removed)
	}
	// Once the live lab is gone, its folder is nobody's: removed by the
	// time it is old enough.
	if err := live.lock.Close(); err != nil {
		t.Fatal(err)
	}
	live.lock = nil
	if removed := removeAbandonedLabDirs(time.Now()); !slices.Equal(removed, []string{live.path}) {
		t.Errorf("removed %v once its lab let go, want %s", removed, live.path)
	}
	// Removing twice is no error.
	if err := next.remove(); err != nil {
		t.Fatal(err)
	}
	if err := next.remove(); err != nil {
		t.Errorf("a second remove: %v", err)
	}
}
