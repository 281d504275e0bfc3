package server

import (
	"container/list"
	"context"
	"net"
	"time"
)

// TLS handshakes.
//
// A connection from a listener that hands out unfinished TLS connections
// (crypto/tls's listener: anything with HandshakeContext) is admitted only
// after its handshake, which runs on the connection's goroutine under a
// fixed deadline (Options.HandshakeTimeout). Connections still in their
// handshake do not count against maxclients: a peer that opens
// connections and never sends a ClientHello cannot lock real clients out.
// They are bounded separately (Options.MaxHandshakes): when the bound is
// reached, the oldest unfinished handshake is closed to make room, so a
// flood of stalled connections costs the attacker a new connection for
// every handshake it wants to hold, while a real handshake takes
// milliseconds.

// Defaults for Options.
const (
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultMaxHandshakes    = 1000
)

// handshaker is a connection that must complete a handshake first
// (*tls.Conn).
type handshaker interface {
	net.Conn
	HandshakeContext(context.Context) error
}

// startHandshake registers nc as an unfinished handshake (closing the
// oldest one if the bound is reached) and completes it on a new
// goroutine, which then serves the connection.
func (s *Server) startHandshake(nc handshaker) {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		nc.Close()
		return
	}
	for s.handshakes.Len() >= s.maxHandshakes {
		old := s.handshakes.Remove(s.handshakes.Front()).(*pendingHandshake)
		old.dropped = true
		old.nc.Close()
		s.stats.hsDropped.Add(1)
	}
	p := &pendingHandshake{nc: nc}
	e := s.handshakes.PushBack(p)
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		_ = nc.SetDeadline(time.Now().Add(s.hsTimeout))
		err := nc.HandshakeContext(context.Background())
		s.mu.Lock()
		dropped := p.dropped
		if !dropped {
			s.handshakes.Remove(e)
		}
		s.mu.Unlock()
		if err != nil || dropped {
			nc.Close()
			if err != nil && !dropped && !s.closing.Load() {
				s.log.Debug("TLS handshake failed", "addr", nc.RemoteAddr().String(), "err", err)
			}
			return
		}
		_ = nc.SetDeadline(time.Time{})
		if c := s.admit(nc); c != nil {
			c.serve()
		}
	}()
}

// pendingHandshake is an element of Server.handshakes (s.mu guards it).
type pendingHandshake struct {
	nc      net.Conn
	dropped bool // closed to make room, or by Shutdown: removed from the list
}

// handshakeList is the unfinished handshakes, oldest first.
type handshakeList = list.List

// closeHandshakes closes every unfinished handshake (Shutdown); s.mu held.
func (s *Server) closeHandshakes() {
	for e := s.handshakes.Front(); e != nil; e = e.Next() {
		p := e.Value.(*pendingHandshake)
		p.dropped = true
		p.nc.Close()
	}
	s.handshakes.Init()
}
