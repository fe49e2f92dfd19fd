// Package outfile checks, before a long run, that the file a program writes at its end
// can be written: a run of minutes that fails on its last line, for a folder that is
// not there, is a run lost.
package outfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrUnwritable is what Check's errors wrap.
var ErrUnwritable = errors.New("cannot be written")

// Check returns an error wrapping ErrUnwritable, naming flag (the option that gave
// path, as "-image"), when path cannot be created or replaced: it is a folder or a file
// this process may not write, or, where it is not there yet, its folder is not there or
// is no folder, or this process may not write in it. It creates nothing.
func Check(flag, path string) error {
	// An existing file is replaced in place (truncated): only the file itself must be
	// writable, whatever its folder allows (-out /dev/null, -json /dev/stdout).
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("%s %q %w: it is a folder", flag, path, ErrUnwritable)
	case err == nil:
		if err := writable(path, false); err != nil {
			return fmt.Errorf("%s %q %w: %w", flag, path, ErrUnwritable, err)
		}
		return nil
	case !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%s %q %w: %w", flag, path, ErrUnwritable, err)
	}
	// Not there (or a part of its folder is a file: the folder check says which). A
	// link to nothing yet is created where it points.
	if target, err := os.Readlink(path); err == nil {
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		return checkFolder(flag, path, filepath.Dir(target))
	}
	return checkFolder(flag, path, filepath.Dir(path))
}

// CheckWithSiblings is Check for a path next to which the program also creates other
// files (ibis-bench -plot writes FILE-2.png, ...): its folder must take new files even
// where path is there already.
func CheckWithSiblings(flag, path string) error {
	if err := Check(flag, path); err != nil {
		return err
	}
	return checkFolder(flag, path, filepath.Dir(path))
}

// checkFolder says whether new files can be made in dir, the folder of path.
func checkFolder(flag, path, dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s %q %w: its folder %s is not there", flag, path, ErrUnwritable, dir)
	case err != nil:
		return fmt.Errorf("%s %q %w: its folder: %w", flag, path, ErrUnwritable, err)
	case !st.IsDir():
		return fmt.Errorf("%s %q %w: %s is not a folder", flag, path, ErrUnwritable, dir)
	}
	if err := writable(dir, true); err != nil {
		return fmt.Errorf("%s %q %w: its folder %s: %w", flag, path, ErrUnwritable, dir, err)
	}
	return nil
}

// CheckAtRankZero is Check for each flag and path given in pairs ("-image", path, ...;
// an empty path is skipped), made by the process that writes the files or starts the
// one that does: rank 0 of a launch, or a process no launcher ranked (one alone, or an
// -np launcher). The other ranks skip it: their hosts may lack rank 0's folders.
func CheckAtRankZero(rank int, pairs ...string) error {
	if rank > 0 {
		return nil
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			continue
		}
		if err := Check(pairs[i], pairs[i+1]); err != nil {
			return err
		}
	}
	return nil
}
