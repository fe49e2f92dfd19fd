//go:build unix

package outfile

import "syscall"

// writable asks the kernel whether this process may write path (and, for a folder,
// enter it), as the later create or open would be judged.
func writable(path string, dir bool) error {
	mode := uint32(2) // W_OK
	if dir {
		mode |= 1 // X_OK
	}
	return syscall.Access(path, mode)
}
