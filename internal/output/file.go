package output

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// File writes path with write, atomically: write fills a temporary file in
// the same folder, which is renamed to path only once write and the close
// succeeded. On an error the temporary file is removed and path is left as
// it was; the error names path.
func File(path string, write func(io.Writer) error) error {
	tmp, err := createTemp(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
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
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
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
