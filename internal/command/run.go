package command

import "strings"

// Outcome is what running one command did (Table.Run), as a value: which
// command it was, whether its handler ran, whether it answered an error
// and which, and what it logged.
type Outcome struct {
	// Spec is the command resolved: the subcommand of a container when one
	// was named, the container itself when its subcommand is unknown, nil
	// when the name is unknown.
	Spec *Spec
	// Err is the first error in the reply (at any depth: an error element
	// of a BF.MADD array counts), without the leading '-'; see Failed.
	Err string
	// Seq is the highest AOF sequence number the handler wrote (Ctx.Seq;
	// 0: none).
	Seq uint64
	// Ran reports that the handler ran. It is false when the command was
	// refused before: unknown name or subcommand, wrong arity, or
	// Policy.Admit.
	Ran bool
	// Failed reports that the reply holds an error (Err).
	Failed bool
	// Silent reports that the handler wrote no reply at all (a bug): Run
	// answered "ERR internal error: <name> produced no reply" for it.
	Silent bool
	// Queued reports that Policy.Queue took the command (MULTI): it was
	// answered by Queue and did not run.
	Queued bool
}

// Policy is how a caller of Table.Run runs commands. Its zero value is
// a client's: internal commands are unknown, nothing else is checked.
type Policy struct {
	// Internal lets internal commands ("_bf.create" …, see IsInternal)
	// run: log replay and the change-stream follower run canonical records.
	Internal bool
	// Admit, if not nil, is asked after the arity check and before the
	// handler: a non-empty result is the error reply, and the handler does
	// not run (the server's AUTH, maxmemory and write-guard checks; the
	// replayer's refusal of commands that are never logged). c.Args is set.
	Admit Admitter
	// Unknown, if not nil, is asked when the name is unknown: true means
	// it dealt with the command and Run writes no reply (the server's
	// cross-protocol check, which closes the connection instead).
	Unknown func(c *Ctx) bool
	// Queue, if not nil, is asked after Admit lets a command run: true
	// means it queued the command (a transaction) and answered it, and the
	// handler does not run (Outcome.Queued).
	Queue func(c *Ctx, spec *Spec) bool
}

// Admitter decides whether a command may run (Policy.Admit): it returns
// the error reply that refuses it, or "" to let it run.
type Admitter interface {
	Admit(c *Ctx, spec *Spec) string
}

// AdmitFunc is a function that is an Admitter.
type AdmitFunc func(c *Ctx, spec *Spec) string

// Admit calls f.
func (f AdmitFunc) Admit(c *Ctx, spec *Spec) string { return f(c, spec) }

// Run runs the command c.Args names (Args[0] the name, in any case) as
// every caller does — the server, AOF replay, the follower and the test
// harness: it looks the name up, resolves a container's subcommand, checks
// the arity, asks p.Admit, runs the handler on c and enforces that the
// handler answered. Each refusal is answered on c.R as Redis words it.
// It sets c.Seq (0 before the handler) and reports the outcome from the
// reply writer's own counts (c.R.Errors, c.R.FirstErr, c.R.Writes): no
// reply is rendered to be parsed back. c.Args must not be empty.
//
// Cost: a map lookup (the name lowercased into a buffer of c, so it does
// not allocate; none when c ran a command of the same spelling last) plus
// the handler's. Not safe for concurrent use of one c.
func (t *Table) Run(c *Ctx, p *Policy) Outcome {
	r := c.R
	errs, writes := r.Errors, r.Writes
	r.FirstErr = ""
	c.Seq = 0
	spec := t.lookupLower(c, c.Args[0], p.Internal)
	o := Outcome{Spec: spec}
	if spec != nil && len(spec.Subcommands) > 0 && len(c.Args) >= 2 {
		if spec = spec.Sub(c.Args[1]); spec != nil {
			o.Spec = spec
		}
	}
	switch {
	case o.Spec == nil:
		if p.Unknown == nil || !p.Unknown(c) {
			r.Error(UnknownCommand(c.Args))
		}
	case spec == nil:
		r.Error(UnknownSubcommand(c.Args))
	case !CheckArity(spec.Arity, len(c.Args)) || spec.Handler == nil:
		r.Error(ArityError(spec.Name))
	default:
		if p.Admit != nil {
			if msg := p.Admit.Admit(c, spec); msg != "" {
				r.Error(msg)
				break
			}
		}
		if p.Queue != nil && p.Queue(c, spec) {
			o.Queued = true
			break
		}
		o.Ran = true
		spec.Handler(c)
		o.Seq = c.Seq
		if r.Writes == writes {
			// Every handler must answer; a silent one would leave the
			// client waiting forever (and desynchronize a pipeline).
			o.Silent = true
			r.Error("ERR internal error: " + spec.Name + " produced no reply")
		}
	}
	if r.Errors != errs {
		o.Failed, o.Err = true, r.FirstErr
	}
	return o
}

// lookupLower finds a command by name (lookupName), first in c's cache of
// the last name it found (c.last); internal names are unknown unless
// internal.
func (t *Table) lookupLower(c *Ctx, name []byte, internal bool) *Spec {
	l := &c.last
	if l.t == t && l.internal == internal && int(l.n) == len(name) && string(l.name[:l.n]) == string(name) {
		return l.spec
	}
	s := t.lookupName(c, name, internal)
	if s != nil && len(name) <= len(l.name) {
		// Only names found are kept: a Table only grows (Add), so a name
		// found stays the same command.
		l.t, l.internal, l.spec, l.n = t, internal, s, uint8(copy(l.name[:], name))
	}
	return s
}

// lastLookup is a Ctx's last resolved command name (Table.lookupLower).
type lastLookup struct {
	t        *Table
	spec     *Spec
	name     [16]byte
	n        uint8
	internal bool
}

// lookupName is lookupLower without the cache: it lowercases ASCII into a
// buffer on the stack (or c's, for a name longer than it) so that it does
// not allocate.
func (t *Table) lookupName(c *Ctx, name []byte, internal bool) *Spec {
	if len(name) > t.maxName || (!internal && IsInternal(name)) {
		return nil
	}
	if len(name) > 32 {
		c.lower = appendLower(c.lower[:0], name)
		return t.m[string(c.lower)]
	}
	var buf [32]byte
	low := buf[:len(name)]
	for i, b := range name {
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		low[i] = b
	}
	if s, ok := t.m[string(low)]; ok {
		return s
	}
	return nil
}

// appendLower appends name to dst with ASCII letters in lowercase.
func appendLower(dst, name []byte) []byte {
	for _, b := range name {
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		dst = append(dst, b)
	}
	return dst
}

// cString mimics printf("%.*s"): the bytes up to the first NUL, at most n.
func cString(b []byte, n int) string {
	for i, x := range b {
		if x == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// UnknownCommand formats Redis 7's error for an unknown command called
// with args. CR and LF become spaces in the writer.
func UnknownCommand(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.WriteString(cString(args[0], 128))
	b.WriteString("', with args beginning with: ")
	n := 0
	for i := 1; i < len(args) && n < 128; i++ {
		a := cString(args[i], 128-n)
		b.WriteString("'")
		b.WriteString(a)
		b.WriteString("' ")
		n += len(a) + 3
	}
	return b.String()
}

// UnknownSubcommand formats Redis 7's error for an unknown subcommand
// (args[1]) of a container command (args[0]).
func UnknownSubcommand(args [][]byte) string {
	return "ERR unknown subcommand '" + cString(args[1], 128) + "'. Try " +
		strings.ToUpper(cString(args[0], 128)) + " HELP."
}
