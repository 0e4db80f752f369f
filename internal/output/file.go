package output

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// File writes path with write, atomically: write fills a temporary file in
// the same folder, which is renamed to path only once write and the close
// succeeded. On an error the temporary file is removed and path is left as
// it was; the error names path.
//
// A symbolic link is followed, to its target even when that does not exist
// yet. What a rename cannot replace is written in place, truncated first,
// as os.WriteFile would: a path under /dev or /proc (/dev/stdout, which
// may stand for a file the shell opened), a device or pipe, an existing
// file in a folder that takes no new file, a file bind-mounted into a
// container.
func File(path string, write func(io.Writer) error) error {
	target := resolve(path)
	if inPlaceOnly(target) {
		return wrapPath(path, inPlace(target, write))
	}
	tmp, err := createTemp(target)
	if err != nil {
		if _, serr := os.Stat(target); serr == nil && isPermission(err) {
			err = inPlace(target, write) // an existing file in a folder we cannot write
		}
		return wrapPath(path, err)
	}
	buf := bufio.NewWriter(tmp)
	err = write(buf)
	if err == nil {
		err = buf.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), target)
		if errors.Is(err, syscall.EBUSY) { // a mount point: copy in place
			err = inPlace(target, func(w io.Writer) error { return copyFile(w, tmp.Name()) })
		}
	}
	os.Remove(tmp.Name()) // gone already after a rename
	return wrapPath(path, err)
}

// resolve follows path's symbolic links, also to a target that does not
// exist yet; path itself otherwise. A path under /dev is kept as given:
// /dev/stdout must stay the process's descriptor, not the file behind it.
func resolve(path string) string {
	if underDevOrProc(path) {
		return path
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	if link, err := os.Readlink(path); err == nil { // dangling
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(path), link)
		}
		return link
	}
	return path
}

// inPlaceOnly says whether path is to be written in place: under /dev or
// /proc, or an existing file that is not a regular one.
func inPlaceOnly(path string) bool {
	if underDevOrProc(path) {
		return true
	}
	st, err := os.Stat(path)
	return err == nil && !st.Mode().IsRegular()
}

func underDevOrProc(path string) bool {
	abs, err := filepath.Abs(path)
	return err == nil && (strings.HasPrefix(abs, "/dev/") || strings.HasPrefix(abs, "/proc/"))
}

func isPermission(err error) bool {
	return errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// inPlace writes path with write in place, truncating it.
func inPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	return errors.Join(write(f), f.Close())
}

// copyFile copies the file named name to w.
func copyFile(w io.Writer, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// wrapPath names path in a non-nil err.
func wrapPath(path string, err error) error {
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Bytes writes b to path atomically, as File does.
func Bytes(path string, b []byte) error {
	return File(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// JSON writes v to w as indented JSON followed by a newline: how every
// report is written.
func JSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// CheckDir makes sure result files can be written into dir before a run
// rather than after it: it creates dir when create is set, then creates
// and removes a temporary file there, as File does.
func CheckDir(dir string, create bool) error {
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tmp, err := createTemp(filepath.Join(dir, "write-check"))
	if err != nil {
		return err
	}
	return errors.Join(tmp.Close(), os.Remove(tmp.Name()))
}

// CheckNewDir makes sure dir can be created and written into, creating
// nothing: dir if it exists, else the nearest folder on its path that does,
// must take a new file. For a folder that is to be made only once there is
// something to write into it.
func CheckNewDir(dir string) error {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		switch {
		case err == nil && !st.IsDir():
			return fmt.Errorf("%s is not a folder", d)
		case err == nil:
			return CheckDir(d, false)
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR): // ENOTDIR: a file on the path
			return err
		case filepath.Dir(d) == d:
			return err
		}
	}
}

// CheckFile makes sure File (and Append) can write path, before a run
// rather than after it, creating nothing: path, or the target of a
// symbolic link (also a dangling one), must not be a folder, and must
// either be in a folder that takes a new file or be an existing file open
// for writing (which File then writes in place); a device or pipe is
// written as it is.
func CheckFile(path string) error {
	target := resolve(path)
	via := ""
	if target != path {
		via = fmt.Sprintf(" (%s links to %s)", path, target)
	}
	st, err := os.Stat(target)
	exists := err == nil
	switch {
	case exists && st.IsDir():
		return fmt.Errorf("a directory%s, want a file", via)
	case exists && (!st.Mode().IsRegular() || underDevOrProc(target)):
		return nil
	case !exists && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	dir := filepath.Dir(target)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("no such directory %s%s", dir, via)
	}
	if err := CheckDir(dir, false); err == nil || !exists {
		return err
	}
	// An existing file in a folder that takes no new file: File writes it
	// in place, if it opens for writing.
	f, err := os.OpenFile(target, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// Append adds what write writes to the end of path, creating it (0666
// before the umask) if need be: for a file that others write to as well,
// such as a CI job's summary ($GITHUB_STEP_SUMMARY), to which a CI system
// appends each step's and which a renamed file would replace. write fills
// a buffer first and the buffer goes in one write, so that a write that
// fails appends nothing. A symbolic link is followed, as File does.
func Append(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return wrapPath(path, err)
	}
	f, err := os.OpenFile(resolve(path), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return wrapPath(path, err)
	}
	_, err = f.Write(buf.Bytes())
	return wrapPath(path, errors.Join(err, f.Close()))
}

// createTemp creates a new hidden file next to path. Unlike os.CreateTemp,
// which makes 0600, it asks for 0666 and lets the umask decide, as
// os.Create does.
func createTemp(path string) (*os.File, error) {
	for range 10 {
		var suffix [6]byte
		if _, err := rand.Read(suffix[:]); err != nil {
			return nil, err
		}
		name := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-"+hex.EncodeToString(suffix[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, os.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("no free temporary name next to %s", path)
}

// A Named file is one of the files Dir writes.
type Named struct {
	Name  string
	Write func(io.Writer) error
}

// Dir creates dir and writes files into it, each as File does, stopping at
// the first error.
func Dir(dir string, files ...Named) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := File(filepath.Join(dir, f.Name), f.Write); err != nil {
			return err
		}
	}
	return nil
}

// Rescue gives results that could not be written where they were asked a
// new folder named after pattern (as os.MkdirTemp names it), in the
// temporary folder or, failing that, the working one; it writes them there
// with write and returns the folder.
func Rescue(pattern string, write func(dir string) error) (string, error) {
	var errs []error
	for _, parent := range []string{os.TempDir(), "."} {
		dir, err := os.MkdirTemp(parent, pattern)
		if err == nil {
			if err = write(dir); err == nil {
				return dir, nil
			}
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

// FreeDir returns dir when it holds none of the files named, else the first
// of dir-2, dir-3... that holds none: where a run writes its results
// without overwriting an earlier run's.
func FreeDir(dir string, names ...string) string {
	holds := func(d string) bool {
		for _, n := range names {
			if _, err := os.Lstat(filepath.Join(d, n)); err == nil {
				return true
			}
		}
		return false
	}
	free := dir
	for i := 2; holds(free); i++ {
		free = fmt.Sprintf("%s-%d", filepath.Clean(dir), i)
	}
	return free
}
