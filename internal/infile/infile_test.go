package infile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A regular file is read, also through a symbolic link; a device, a named
// pipe and a folder are refused unread, naming the file, and so is a file
// over the limit.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "r.json")
	if err := os.WriteFile(file, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{file, link} {
		if b, fi, err := Read(name, 3, "a report"); err != nil || string(b) != "{}\n" || fi.Size() != 3 {
			t.Errorf("Read(%s) = %q, %v", name, b, err)
		}
	}
	for name, want := range map[string]string{
		zero: zero + ": a device, not a regular file as a report is",
		fifo: fifo + ": a named pipe, not a regular file as a report is",
		dir:  dir + ": a folder, not a regular file as a report is",
		file: file + ": 3 bytes, more than the 2 (0 MiB) a report can take",
	} {
		if _, _, err := Read(name, 2, "a report"); err == nil || err.Error() != want {
			t.Errorf("Read(%s): %v\nwant %q", name, err, want)
		}
	}
	if _, _, err := Read(filepath.Join(dir, "missing.json"), 2, "a report"); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("a missing file: %v", err)
	}
}
