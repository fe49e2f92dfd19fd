package wanemu

import (
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// OpenTUN attaches to the TUN device name, which must exist (made beforehand, e.g. by
// `ip tuntap add mode tun`, which has no packet information header), and returns it: each Read is one IP packet, each
// Write sends one. Closing it ends a Read under way.
func OpenTUN(name string) (*os.File, error) {
	// TUNSETIFF would make a device that does not exist, in whatever namespace this is.
	if _, err := net.InterfaceByName(name); err != nil {
		return nil, fmt.Errorf("wanemu: TUN device %q: %w", name, err)
	}
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("wanemu: opening /dev/net/tun: %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("wanemu: device %q: %w", name, err)
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("wanemu: attaching to TUN device %q: %w", name, err)
	}
	// A non-blocking descriptor joins Go's poller, so Close ends a blocked Read.
	return os.NewFile(uintptr(fd), "/dev/net/tun:"+name), nil
}

// nanosleep sleeps for d with the kernel's precision (tens of microseconds), blocking the
// calling thread.
func nanosleep(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// fineTimers makes the calling thread's sleeps end as close to their time as the kernel
// can (a timer slack of 1 ns instead of 50 us); best effort.
func fineTimers() { _ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) }
