package wanemu

import "net/netip"

// addrs returns the source and destination addresses of an IPv4 packet; ok is false for
// anything else (IPv6, a truncated header).
func addrs(pkt []byte) (src, dst netip.Addr, ok bool) {
	if len(pkt) < 20 || pkt[0]>>4 != 4 || int(pkt[0]&0x0f)*4 < 20 {
		return netip.Addr{}, netip.Addr{}, false
	}
	return netip.AddrFrom4([4]byte(pkt[12:16])), netip.AddrFrom4([4]byte(pkt[16:20])), true
}
