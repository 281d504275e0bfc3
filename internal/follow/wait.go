package follow

import (
	"context"
	"strconv"
	"time"

	"github.com/probly/probly/internal/command"
)

// WaitCommand is the name of the read-your-writes command.
const WaitCommand = "follow.wait"

// errNotFollowing answers FOLLOW.WAIT on a server started without --follow.
const errNotFollowing = "ERR this server does not follow a stream (start it with --follow)"

// Register adds FOLLOW.WAIT to t: `FOLLOW.WAIT position timeout`, in the
// style of Redis's WAIT/WAITAOF. It blocks until the follower has applied
// every change up to stream sequence position (what the publisher's
// JetStream acknowledgement returned) or timeout milliseconds pass (0:
// no limit), and answers the applied position as an integer: ≥ position
// means reads issued afterwards on this or any connection see every change
// up to position. Without --follow it answers an error. Installing a
// follower (Follower.WrapReads) makes it work.
func Register(t *command.Table) {
	// Blocking: the server runs it outside the command gate, so that a
	// wait does not hold up transactions (and the follower's own applies
	// behind a waiting EXEC).
	t.Add(&command.Spec{Name: WaitCommand, Arity: 3, Flags: command.FlagBlocking, ACL: command.ACLConnection,
		Handler: func(c *command.Ctx) { c.R.Error(errNotFollowing) },
		Doc: command.Doc{
			Summary: "Waits until the follower has applied the change stream up to a position (serve --follow).",
			Since:   "7.4.0", Group: command.GroupServer,
			Args: []command.Arg{{Name: "position", Type: command.ArgInteger}, {Name: "timeout", Type: command.ArgInteger}},
		}})
}

// waitHandler is FOLLOW.WAIT with f.
func (f *Follower) waitHandler(c *command.Ctx) {
	pos, err := strconv.ParseUint(string(c.Args[1]), 10, 64)
	if err != nil {
		c.R.Error("ERR position is not an integer or out of range")
		return
	}
	ms, err := strconv.ParseInt(string(c.Args[2]), 10, 64)
	if err != nil || ms < 0 {
		c.R.Error("ERR timeout is not an integer or out of range")
		return
	}
	ctx := context.Background()
	if c.Conn.Tx != nil && c.Conn.Tx.Executing() {
		// Inside EXEC nothing may block (as Redis): answer the position
		// applied now. The follower cannot apply while EXEC runs.
		done, cancel := context.WithCancel(ctx)
		cancel()
		ctx = done
	} else if ms > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(min(ms, int64(24*time.Hour/time.Millisecond)))*time.Millisecond)
		defer cancel()
	}
	c.R.Int(int64(f.WaitApplied(ctx, pos)))
}
