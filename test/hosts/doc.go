// Package hosts runs pools across hosts that are Linux network namespaces
// (internal/netns), to check what one host's loopback cannot: that members started with
// no address setting publish addresses the other hosts reach them by. The tests need
// root; without it they skip.
package hosts
