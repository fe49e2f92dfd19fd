// Package inbox is nio's message source for its nonblocking and thread receive ports
// (core.Capabilities.Source): an event loop reads each socket and pushes the bytes into
// the connection's Inbox, and the port's Queue lists, oldest first, the inboxes whose
// next message can start without waiting (its first packet is whole, or it is a bulk
// packet whose body the reader streams; on a many-to-one port a message of up to
// core.WholeMessageLimit only once it is whole). Whoever holds the port's token takes
// the next inbox (Queue.Take) and reads its message on its own goroutine; no goroutine
// waits on a connection. An inbox is queued at most once and never while a message of
// it is live, which keeps each connection FIFO. Its scan follows the packet headers
// with the reader's own checks (serialization.Scanner), so a connection whose end,
// goodbye or invalid bytes come next, with nothing startable before them, is retired
// at once, as a reader goroutine would retire it.
//
// An inbox's lifecycle is one typed state (inboxState) and its flow control another
// (inboxFlow), each with its legal moves in one table. A reader waiting for a large
// read posts its slice, and the transport's bytes go straight into it (posted.go).
// It lives under impl/nio because nio is its one user.
package inbox
