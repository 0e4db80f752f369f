package output

import (
	"bytes"
	"errors"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A result file is shared: 0644 under the usual umask, like os.Create's,
// not os.CreateTemp's 0600.
func TestFileModeFollowsTheUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "report.json")
	if err := Bytes(path, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
}

// A write that fails leaves the old file as it was and nothing beside it.
func TestFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.md")
	if err := Bytes(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := File(path, func(w io.Writer) error {
		io.WriteString(w, "half a new report")
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want boom naming %s", err, path)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("file = %q, want the old one", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files left in the folder, want 1", len(entries))
	}
}

func TestFileIntoAMissingFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "r.json")
	if err := Bytes(path, nil); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want one naming %s", err, path)
	}
}

// CheckDir creates the folder when asked, finds one that cannot take a
// file, and leaves nothing behind.
func TestCheckDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := CheckDir(dir, false); err == nil {
		t.Error("a missing folder passed without create")
	}
	if err := CheckDir(dir, true); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("left %v (%v); want an empty folder", entries, err)
	}
	file := filepath.Join(dir, "file")
	if err := Bytes(file, nil); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{file, filepath.Join(file, "results")} {
		if err := CheckDir(bad, true); err == nil {
			t.Errorf("%s passed", bad)
		}
	}
}

func TestStackPNG(t *testing.T) {
	for _, align := range []bool{false, true} {
		var b bytes.Buffer
		if err := StackPNG(&b, 4*vg.Inch, 6*vg.Inch, draw.Tiles{}, align, plot.New(), plot.New()); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatal(err)
		}
		if got := img.Bounds().Dx(); got != 384 {
			t.Errorf("width %d px, want 384 (4 in at 96 dpi)", got)
		}
	}
}

// A key is drawn once above the plots, as tall as its tallest column; an
// empty one takes no room.
func TestStackPNGKey(t *testing.T) {
	if h := (Key{}).Height(); h != 0 {
		t.Errorf("an empty key is %v tall", h)
	}
	entry := KeyEntry{Label: "outage"}
	one, two := Key{{entry, entry, entry}}, Key{{entry}, {entry, entry, entry}}
	if one.Height() <= 0 || two.Height() != one.Height() {
		t.Errorf("keys %v and %v tall, want the height of their tallest column, three entries", one.Height(), two.Height())
	}
	var b bytes.Buffer
	if err := StackPNGKey(&b, 4*vg.Inch, 6*vg.Inch, two, draw.Tiles{}, true, plot.New(), plot.New()); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds(); got.Dx() != 384 || got.Dy() != 576 {
		t.Errorf("%v px, want 384×576 (4×6 in at 96 dpi)", got.Size())
	}
}

// Rescue writes into a new folder of the temporary folder, and says why
// when it cannot.
func TestRescue(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir, err := Rescue("rescued-*", func(dir string) error { return Bytes(filepath.Join(dir, "r.json"), nil) })
	if err != nil || !strings.HasPrefix(filepath.Base(dir), "rescued-") || filepath.Dir(dir) != os.TempDir() {
		t.Fatalf("Rescue = %q, %v; want a rescued-* folder in %s", dir, err, os.TempDir())
	}
	if _, err := os.Stat(filepath.Join(dir, "r.json")); err != nil {
		t.Error(err)
	}
	boom := errors.New("boom")
	if _, err := Rescue("rescued-*", func(string) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("a write that fails: %v", err)
	}
}

// A symbolic link is followed, not replaced, and what a rename cannot
// replace, a device, is written in place.
func TestFileFollowsLinksAndDevices(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.pem")
	if err := Bytes(real, []byte("old")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.pem")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := Bytes(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("the link's target holds %q, want new", b)
	}
	if err := Bytes(os.DevNull, []byte("gone")); err != nil {
		t.Errorf("writing %s: %v", os.DevNull, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d files in the folder, want the file and its link", len(entries))
	}
}

// A dangling link gets its target created; /dev/stdout stays the
// descriptor rather than the file behind it.
func TestFileDanglingLinkAndDevPaths(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "ca.pem")
	if err := os.Symlink("real.pem", link); err != nil {
		t.Fatal(err)
	}
	if err := Bytes(link, []byte("ca")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "real.pem")); err != nil || string(b) != "ca" {
		t.Errorf("the link's target holds %q, %v; want it created", b, err)
	}
	if got := resolve("/dev/stdout"); got != "/dev/stdout" || !inPlaceOnly(got) {
		t.Errorf("/dev/stdout resolves to %q (in place: %v), want itself, written in place", got, inPlaceOnly(got))
	}
}

// An existing file in a folder that takes no new file is written in place,
// as os.WriteFile would.
func TestFileInAFolderThatTakesNoNewFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root creates files in any folder: nothing to refuse")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ca.pem")
	if err := Bytes(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	if err := Bytes(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("file holds %q, want new", b)
	}
}

// A folder holding an earlier run's results is left alone: the next free
// one is chosen.
func TestFreeDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	if got := FreeDir(dir, "report.md"); got != dir {
		t.Errorf("a missing folder: %s, want it", got)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := FreeDir(dir, "report.md"); got != dir {
		t.Errorf("an empty folder: %s, want it", got)
	}
	for _, d := range []string{dir, dir + "-2"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := Bytes(filepath.Join(d, "report.md"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := FreeDir(dir+"/", "report.md", "matrix.md"); got != dir+"-3" {
		t.Errorf("with results in %s and -2: %s, want -3", dir, got)
	}
}

// CheckFile finds what File cannot write, creating nothing: a link whose
// target's folder is missing (File follows the link and fails there), a
// folder; it passes what File writes, a dangling link into a folder
// included.
func TestCheckFile(t *testing.T) {
	dir := t.TempDir()
	nowhere, here := filepath.Join(dir, "nowhere.xml"), filepath.Join(dir, "here.xml")
	if err := os.Symlink(filepath.Join(dir, "missing", "junit.xml"), nowhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target.xml", here); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		nowhere:                            "no such directory " + filepath.Join(dir, "missing") + " (" + nowhere + " links to ",
		dir:                                "a directory, want a file",
		filepath.Join(dir, "no", "r.json"): "no such directory " + filepath.Join(dir, "no"),
		here:                               "",
		filepath.Join(dir, "new.json"):     "",
		os.DevNull:                         "",
	} {
		err := CheckFile(path)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckFile(%s): %v, want %q", path, err, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d entries in the folder, want the two links", len(entries))
	}
}

// CheckNewDir passes a folder that can be made, and makes none.
func TestCheckNewDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := Bytes(file, nil); err != nil {
		t.Fatal(err)
	}
	if err := CheckNewDir(filepath.Join(dir, "a", "b")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err == nil {
		t.Error("CheckNewDir made a folder")
	}
	if err := CheckNewDir(filepath.Join(file, "results")); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("a folder under a file: %v", err)
	}
}

// Append adds to what a file holds (a CI system's summary of the steps
// before), through a link too, and a write that fails adds nothing.
func TestAppend(t *testing.T) {
	dir := t.TempDir()
	path, link := filepath.Join(dir, "summary.md"), filepath.Join(dir, "link.md")
	if err := os.Symlink("summary.md", link); err != nil {
		t.Fatal(err)
	}
	add := func(p, s string) error {
		return Append(p, func(w io.Writer) error { _, err := io.WriteString(w, s); return err })
	}
	if err := add(link, "step 1\n"); err != nil {
		t.Fatal(err)
	}
	if err := add(path, "step 2\n"); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := Append(path, func(w io.Writer) error { io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) {
		t.Errorf("a failed write: %v", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "step 1\nstep 2\n" {
		t.Errorf("the file holds %q, %v; want both steps", b, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
}
