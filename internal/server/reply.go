package server

import "sync/atomic"

// Replies: each connection buffers the replies of a batch of pipelined
// commands in its resp.Writer (client.wr) and writes them in one write(2)
// after the batch's durability wait (settle). The buffer is reused from
// batch to batch; one that a large reply grew past countedBuf is dropped
// after its write, under the policy of the read buffers (clients.go).
//
// While a write is in progress (a client that does not read its replies
// blocks it once the socket's buffers are full), the connection publishes
// how many reply bytes it holds, so that CLIENT LIST and CLIENT INFO show
// them (outputBuf), and INFO clients the largest of the last seconds
// (peakSlots).

// replyStatic is the part of the reply buffer reported as Redis's static
// reply buffer (obl): Redis's PROTO_REPLY_CHUNK_BYTES.
const replyStatic = 16 << 10

// outState is what other goroutines read of a connection's reply buffer.
type outState struct {
	// pending is the number of reply bytes being written to the socket:
	// the whole buffer from the start of the write until it returns
	// (a net.Conn write returns when the socket took every byte).
	pending atomic.Int64
}

// flushReplies writes the buffered replies to the connection (one write)
// and drops the buffer if it grew large. It reports false when the write
// failed (the connection is to be closed).
func (c *client) flushReplies() bool {
	n := c.wr.Len()
	if n == 0 {
		return true
	}
	c.out.pending.Store(int64(n))
	if n > replyStatic {
		c.s.outPeak.note(c.s.now(), int64(n))
	}
	err := c.wr.Flush()
	c.out.pending.Store(0)
	if c.wr.Cap() > countedBuf {
		c.s.dropped(c.wr.Shrink(countedBuf))
	}
	return err == nil
}

// outputBuf returns the connection's unsent reply bytes as CLIENT LIST
// reports them, mapped onto Redis 7's two-part output buffer (a 16 KiB
// static buffer, obl, then a list of blocks: oll blocks of omem bytes).
// probly's one buffer counts as one block past the static part.
//
// self is true on the connection's own goroutine (CLIENT INFO, or CLIENT
// LIST run by it): it sees the replies of the earlier commands of its
// batch, not being written yet, which Redis would hold in the static
// buffer first (obl up to 16 KiB) and the rest in the list. Other
// connections see the bytes of a write in progress (0 between writes):
// Redis writes its static buffer first, so a pending write of more than
// 16 KiB shows as list bytes (obl 0, oll 1, omem all of it), a smaller
// one as obl.
func (c *client) outputBuf(self bool) (obl, oll, omem int64) {
	if self {
		n := int64(c.wr.Len())
		obl = min(n, replyStatic)
		omem = n - obl
	} else if n := c.out.pending.Load(); n > replyStatic {
		omem = n
	} else {
		obl = n
	}
	if omem > 0 {
		oll = 1
	}
	return obl, oll, omem
}

// peakSlots is INFO's client_recent_max_output_buffer, as Redis keeps it
// (CLIENTS_PEAK_MEM_USAGE_SLOTS): for each of the last 8 seconds, the
// largest omem of a write in progress that second. Connections note
// writes of more than 16 KiB only; the reaper clears the coming second's
// slot. Safe for concurrent use.
type peakSlots [8]atomic.Int64

// note records v bytes at now (ms since start).
func (p *peakSlots) note(now, v int64) {
	slot := &p[now/1000%int64(len(p))]
	for {
		old := slot.Load()
		if v <= old || slot.CompareAndSwap(old, v) {
			return
		}
	}
}

// advance clears the slot of the second after now (ms since start), so
// that it starts from 0 when that second comes (called by the reaper at
// every tick).
func (p *peakSlots) advance(now int64) {
	p[(now/1000+1)%int64(len(p))].Store(0)
}

// max is the largest value noted in the last 8 seconds.
func (p *peakSlots) max() int64 {
	var m int64
	for i := range p {
		m = max(m, p[i].Load())
	}
	return m
}
