package app

import "github.com/probly/probly/internal/acl"

// aclFileProtects reports whether the aclfile at path loads and gives the
// default user a password (not nopass, or off), so that a non-loopback
// listener without --requirepass is not open to everyone (protected mode).
func aclFileProtects(path string) bool {
	if path == "" {
		return false
	}
	tab, _ := Tables()
	r := acl.New(tab)
	r.SetFile(path)
	if r.Load() != nil {
		return false // the start fails later with the file's error
	}
	d := r.Default()
	return !d.NoPass() || !d.Enabled()
}
