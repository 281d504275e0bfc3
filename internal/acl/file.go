package acl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoFile is ACL SAVE's and ACL LOAD's error without an aclfile
// (Redis's text).
//
//lint:ignore ST1005 the text is Redis's reply, sent as is
var ErrNoFile = errors.New("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.")

// ErrFile is wrapped by every error of an aclfile that cannot be loaded.
var ErrFile = errors.New("acl: invalid aclfile")

// SetFile sets the aclfile path ("" = none) that Save and Load use.
func (r *Registry) SetFile(path string) {
	r.mu.Lock()
	r.file = path
	r.mu.Unlock()
}

// File returns the aclfile path.
func (r *Registry) File() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.file
}

// Save writes every user to the aclfile in ACL LIST's format (ACL SAVE):
// to a temporary file in the same folder, fsynced, then renamed over the
// aclfile, so a crash leaves the old file or the new one.
func (r *Registry) Save() error {
	path := r.File()
	if path == "" {
		return ErrNoFile
	}
	data := strings.Join(r.List(), "\n") + "\n"
	tmp, err := os.CreateTemp(filepath.Dir(path), ".acl-*")
	if err != nil {
		return fmt.Errorf("acl: saving the aclfile: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err = tmp.WriteString(data); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("acl: saving the aclfile: %w", err)
	}
	return nil
}

// maxFileBytes bounds the aclfile Load reads.
const maxFileBytes = 64 << 20

// Load replaces every user with the aclfile's (ACL LOAD, and at start).
// If any line is wrong nothing changes, and the error lists every
// problem as Redis does. A file without the default user gets Redis's
// default one. Users that are not in the file are deleted (their
// connections are closed by the server); the others keep their
// connections and get the file's rules.
func (r *Registry) Load() error {
	path := r.File()
	if path == "" {
		return ErrNoFile
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrFile, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxFileBytes {
		return fmt.Errorf("%w: %s is larger than %d bytes", ErrFile, path, maxFileBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrFile, err)
	}
	if len(data) > maxFileBytes {
		return fmt.Errorf("%w: %s is larger than %d bytes", ErrFile, path, maxFileBytes)
	}
	return r.LoadText(path, string(data))
}

// LoadText is Load of text read from the file called name (which errors
// mention).
func (r *Registry) LoadText(name, text string) error {
	states, err := r.Parse(name, text)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for n, u := range r.us {
		if _, keep := states[n]; !keep {
			u.deleted.Store(true)
			delete(r.us, n)
		}
	}
	for n, st := range states {
		u := r.us[n]
		if u == nil {
			u = &User{name: n}
			r.us[n] = u
		}
		r.publish(u, st)
	}
	return nil
}

// Parse checks an aclfile's text and returns each user's settings; it
// changes nothing. The error, wrapping ErrFile, is Redis's: every
// problem as "<name>:<line>: <reason>. " and a closing warning.
func (r *Registry) Parse(name, text string) (map[string]*state, error) {
	states := map[string]*state{}
	var errs strings.Builder
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		where := name + ":" + strconv.Itoa(i+1)
		words := strings.Fields(line)
		if len(words) < 2 || words[0] != "user" {
			errs.WriteString(where + " should start with user keyword followed by the username. ")
			continue
		}
		user := words[1]
		if _, dup := states[user]; dup {
			errs.WriteString("WARNING: Duplicate user '" + user + "' found on line " + strconv.Itoa(i+1) + ". ")
			continue
		}
		st := r.emptyState()
		ok := true
		for _, rule := range words[2:] {
			if err := r.apply(st, rule); err != nil {
				var re *RuleError
				if errors.As(err, &re) {
					errs.WriteString(where + ": " + re.Reason + ". ")
				}
				ok = false
				break
			}
		}
		if ok {
			states[user] = st
		}
	}
	if errs.Len() > 0 {
		return nil, &FileError{Text: errs.String() + "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"}
	}
	if _, ok := states["default"]; !ok {
		st := r.emptyState()
		for _, rule := range defaultRules {
			_ = r.apply(st, rule)
		}
		states["default"] = st
	}
	return states, nil
}

// FileError is an aclfile that cannot be loaded; Text is Redis's reply
// text without "ERR ".
type FileError struct{ Text string }

func (e *FileError) Error() string { return e.Text }

// Unwrap makes a FileError an ErrFile.
func (e *FileError) Unwrap() error { return ErrFile }
