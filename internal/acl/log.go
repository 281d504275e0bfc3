package acl

import (
	"sync"
	"time"
)

// Info is what ACL GETUSER reports about a user.
type Info struct {
	Flags, Passwords         []string
	Commands, Keys, Channels string
}

// GetUser returns the user's settings as ACL GETUSER reports them, and
// false when there is no such user.
func (r *Registry) GetUser(name string) (Info, bool) {
	u := r.Lookup(name)
	if u == nil {
		return Info{}, false
	}
	st := u.st.Load()
	return Info{Flags: flags(st), Passwords: append([]string{}, st.passwords...), Commands: r.commandRules(st),
		Keys: keysText(st), Channels: channelsText(st)}, true
}

// DefaultLogLen is Redis's acllog-max-len default.
const DefaultLogLen = 128

// logGroupWindow is how long a denial repeats an entry instead of adding
// one (Redis's ACL_LOG_GROUPING_MAX_TIME_DELTA).
const logGroupWindow = 60 * time.Second

// Entry is one ACL LOG entry (Redis 7.2's fields).
type Entry struct {
	Count      int64
	Reason     string // "command", "key", "auth"
	Context    string // "toplevel", "multi"
	Object     string // the command, the key, or "AUTH"
	Username   string
	ClientInfo string
	ID         int64
	Created    time.Time
	Updated    time.Time
}

// Log is the ACL LOG: the most recent denials, newest first, repeated
// ones within 60 s folded into one entry with a count. Safe for
// concurrent use. Its zero value holds DefaultLogLen entries.
type Log struct {
	mu      sync.Mutex
	entries []Entry
	nextID  int64
	max     int
	maxSet  bool
}

// SetMax sets how many entries the log keeps (acllog-max-len; 0 keeps
// none, as in Redis).
func (l *Log) SetMax(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.max, l.maxSet = max(n, 0), true
	l.trim()
}

func (l *Log) trim() {
	m := DefaultLogLen
	if l.maxSet {
		m = l.max
	}
	if len(l.entries) > m {
		l.entries = l.entries[:m]
	}
}

// Add records a denial at now.
func (l *Log) Add(reason, context, object, username, clientInfo string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 0; i < len(l.entries) && i < 10; i++ {
		e := &l.entries[i]
		if e.Reason == reason && e.Context == context && e.Object == object && e.Username == username &&
			now.Sub(e.Updated) < logGroupWindow {
			e.Count++
			e.Updated, e.ClientInfo = now, clientInfo
			moved := *e
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = moved
			return
		}
	}
	l.entries = append(l.entries, Entry{})
	copy(l.entries[1:], l.entries)
	l.entries[0] = Entry{Count: 1, Reason: reason, Context: context, Object: object, Username: username,
		ClientInfo: clientInfo, ID: l.nextID, Created: now, Updated: now}
	l.nextID++
	l.trim()
}

// Entries returns up to n entries (n < 0: all), newest first.
func (l *Log) Entries(n int) []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n < 0 || n > len(l.entries) {
		n = len(l.entries)
	}
	return append([]Entry(nil), l.entries[:n]...)
}

// Reset empties the log (ACL LOG RESET).
func (l *Log) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = nil
}
