package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// FileCheck is what CheckDir or CheckFile found in one AOF file.
type FileCheck struct {
	Path    string
	Gen     uint64 // generation (from the header for CheckFile)
	Size    int64  // bytes
	Records uint64 // good records before the damage (all of them if none)
	Good    int64  // bytes of the valid prefix (header included)
	Last    bool   // the newest generation (a torn tail is expected there)

	// Problem is empty when the file is valid. Otherwise it says what is
	// wrong at byte Offset, in record number Record (1-based, counted in
	// this file).
	Problem string
	Offset  int64
	Record  uint64
	// Torn is set when the damage is an interrupted last write that the
	// server cuts off by itself at start (only in the last generation).
	Torn bool
	// Header is set when the file header is damaged: no record of the
	// file can be trusted.
	Header bool
	// Version is set when the file was written by an unsupported format
	// version: not damage, and not fixable here.
	Version bool
	// FormatVersion is the header's format version (1 or 2; 0 if the
	// header is damaged).
	FormatVersion uint16
	// Ended is set when the file ends with an end-of-generation record
	// (at byte offset EndAt): the log continues in generation Gen+1.
	Ended bool
	EndAt int64
}

// Fatal reports whether the problem stops the server from starting.
func (c FileCheck) Fatal() bool { return c.Problem != "" && !c.Torn }

// CheckReport is what CheckDir found in a data directory.
type CheckReport struct {
	Dir string
	// Snapshot is the path of dump.pdb, or "" if there is none.
	Snapshot string
	// SnapshotKeys and SnapshotGen describe a valid dump.pdb: its key count
	// and the first AOF generation recovery replays after it.
	SnapshotKeys int
	SnapshotGen  uint64
	// SnapshotErr is set when dump.pdb is damaged (check-aof cannot fix
	// that: the remedy is restoring dump.pdb from a backup).
	SnapshotErr error
	// Files are the AOF generations recovery replays, oldest first.
	Files []FileCheck
	// Stale are AOF generations older than the snapshot's cut (deleted at
	// start, not checked).
	Stale []string
	// Gap is the first generation recovery needs but cannot find (0 if the
	// sequence is complete); generations after it cannot be replayed. It
	// is also set when dump.pdb's generation is missing (no AOF at all
	// after the snapshot: SnapshotGen == Gap and Files is empty), and when
	// the last generation ends with an end-of-generation record naming a
	// generation that does not exist.
	Gap uint64
}

// OK reports whether the directory would start: no damaged snapshot, no
// missing generation and no damage other than a torn tail.
func (r *CheckReport) OK() bool {
	if r.SnapshotErr != nil || r.Gap != 0 {
		return false
	}
	for _, f := range r.Files {
		if f.Fatal() {
			return false
		}
	}
	return true
}

// CheckDir checks a data directory the way Open would recover it, without
// changing anything: dump.pdb (fully verified, every value decoded with
// decode, if decode is not nil; otherwise only its header is read), the
// sequence of AOF generations and every record of every generation to
// replay. Temporary files are ignored. The returned error is an I/O error;
// damage is reported in the CheckReport.
func CheckDir(dir string, decode Decoder) (*CheckReport, error) {
	r := &CheckReport{Dir: dir}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("persist: read data directory: %w", err)
	}
	var gens []uint64
	hasSnap := false
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if e.Name() == snapshotName {
			hasSnap = true
		} else if g, ok := parseAOFName(e.Name()); ok {
			gens = append(gens, g)
		}
	}
	slices.Sort(gens)
	start := uint64(1)
	if hasSnap {
		p := filepath.Join(dir, snapshotName)
		r.Snapshot = p
		hdr, n, err := checkSnapshot(p, decode)
		if err != nil {
			r.SnapshotErr = err
			if len(gens) > 0 {
				start = gens[0] // unknown cut: check what is there
			}
		} else {
			start, r.SnapshotKeys, r.SnapshotGen = hdr.gen, n, hdr.gen
		}
	}
	var live []uint64
	for _, g := range gens {
		if g < start {
			r.Stale = append(r.Stale, filepath.Join(dir, aofFileName(g)))
		} else {
			live = append(live, g)
		}
	}
	want := start
	for i, g := range live {
		if g != want {
			r.Gap = want
			live = live[:i]
			break
		}
		want++
	}
	if hasSnap && r.SnapshotErr == nil && len(live) == 0 {
		r.Gap = start // the snapshot says the writes after it are there
	}
	for i, g := range live {
		fc, err := checkAOF(filepath.Join(dir, aofFileName(g)), g, i == len(live)-1 && r.Gap == 0)
		if err != nil {
			return nil, err
		}
		r.Files = append(r.Files, fc)
	}
	if n := len(r.Files); n > 0 && r.Gap == 0 && r.Files[n-1].Ended {
		last := &r.Files[n-1]
		if _, err := os.Stat(filepath.Join(dir, aofFileName(last.Gen+1)+tmpSuffix)); err == nil {
			// An interrupted switch: start-up removes the record.
			last.Problem, last.Offset, last.Record = fmt.Sprintf("ends with the end-of-generation record of an interrupted "+
				"switch to %s (its temporary file exists); start-up removes the record", aofFileName(last.Gen+1)), last.EndAt, last.Records+1
			last.Torn, last.Good = true, last.EndAt
		} else {
			r.Gap = last.Gen + 1
		}
	}
	return r, nil
}

// checkSnapshot verifies dump.pdb. Without a decoder only the header is
// checked.
func checkSnapshot(p string, decode Decoder) (snapHeader, int, error) {
	if decode != nil {
		hdr, entries, err := readSnapshot(p, decode)
		return hdr, len(entries), err
	}
	var h snapHeader
	f, err := os.Open(p)
	if err != nil {
		return h, 0, err
	}
	defer f.Close()
	var b [snapHeaderSize]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return h, 0, fmt.Errorf("%w: %s: header cut short", ErrCorrupt, p)
	}
	if string(b[:8]) != snapMagic || binary.LittleEndian.Uint32(b[36:]) != crc32c(b[:36]) {
		return h, 0, fmt.Errorf("%w: %s at byte offset 0: bad snapshot header", ErrCorrupt, p)
	}
	h.gen = binary.LittleEndian.Uint64(b[12:])
	h.count = binary.LittleEndian.Uint64(b[28:])
	return h, int(h.count), nil
}

// CheckFile checks one AOF file on its own, as if it were the last
// generation (so damage at its very end counts as a torn tail). The
// generation is taken from the file's header.
func CheckFile(path string) (FileCheck, error) {
	gen := uint64(0)
	if g, ok := parseAOFName(filepath.Base(path)); ok {
		gen = g
	} else if f, err := os.Open(path); err == nil {
		var b [aofHeaderSize]byte
		if _, err := io.ReadFull(f, b[:]); err == nil {
			gen = binary.LittleEndian.Uint64(b[12:])
		}
		f.Close()
	}
	return checkAOF(path, gen, true)
}

// checkAOF checks one AOF generation without changing it.
func checkAOF(p string, gen uint64, last bool) (FileCheck, error) {
	fc := FileCheck{Path: p, Gen: gen, Last: last}
	f, err := os.Open(p)
	if err != nil {
		return fc, fmt.Errorf("persist: open AOF: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fc, fmt.Errorf("persist: stat %s: %w", p, err)
	}
	fc.Size = st.Size()
	fail := func(off int64, reason string) {
		fc.Problem, fc.Offset, fc.Record = reason, off, fc.Records+1
	}
	if last {
		blank, err := blankAOF(f)
		if err != nil {
			return fc, fmt.Errorf("persist: read %s: %w", p, err)
		}
		if blank {
			fail(0, "file header cut short or never written (a crash while the generation was created); start-up rewrites it")
			fc.Torn, fc.Header = true, true
			return fc, nil
		}
	}
	var b [aofHeaderSize]byte
	if n, err := f.ReadAt(b[:], 0); err != nil {
		if !errors.Is(err, io.EOF) {
			return fc, fmt.Errorf("persist: read %s: %w", p, err)
		}
		fail(int64(n), fmt.Sprintf("file header cut short (%d of %d bytes) in a file that is not the last", n, aofHeaderSize))
		fc.Header = true
		return fc, nil
	}
	if reason, sentinel := checkAOFHeader(b[:], gen); sentinel != nil {
		fail(0, reason)
		fc.Header, fc.Version = true, errors.Is(sentinel, ErrVersion)
		return fc, nil
	}
	fc.FormatVersion = aofHeaderVersion(b[:])
	sc, err := scanAOF(f, fc.Size, gen, fc.FormatVersion, nil)
	if err != nil {
		return fc, fmt.Errorf("persist: read %s: %w", p, err)
	}
	fc.Records, fc.Good = sc.records, sc.good
	if sc.txOpen && !sc.badPayload && last && (sc.good != fc.Size || sc.eog == nil) {
		// The log ends inside a transaction unit (tx.go): a torn tail
		// from the unit's MULTI record, if the rest is torn too.
		if sc.good != fc.Size {
			torn, reason, err := damage(f, fc.Size, sc.good, sc.reason, last)
			if err != nil {
				return fc, fmt.Errorf("persist: read %s: %w", p, err)
			}
			if !torn {
				fail(sc.good, reason)
				return fc, nil
			}
		}
		fc.Records, fc.Good = sc.txRecords, sc.txAt
		fail(sc.txAt, "the log ends inside a transaction (MULTI without its EXEC record: never acknowledged); start-up cuts it off by itself")
		fc.Torn = true
		return fc, nil
	}
	if sc.good == fc.Size {
		if sc.eog != nil {
			fc.Ended, fc.EndAt = true, sc.eogAt
		} else if !last && fc.FormatVersion >= AOFFormatVersion {
			fail(fc.Size, fmt.Sprintf("the file ends without the end-of-generation record that every generation followed by "+
				"another one has (%s follows it): its end is missing, and so are the records it held", aofFileName(gen+1)))
		}
		return fc, nil
	}
	if sc.badPayload {
		fail(sc.good, sc.reason)
		return fc, nil
	}
	torn, reason, err := damage(f, fc.Size, sc.good, sc.reason, last)
	if err != nil {
		return fc, fmt.Errorf("persist: read %s: %w", p, err)
	}
	if torn {
		reason = "torn last record (" + reason + "); start-up cuts it off by itself"
	}
	fail(sc.good, reason)
	fc.Torn = torn
	return fc, nil
}

// FixAction is one change made by Fix.
type FixAction struct {
	Path   string // the file changed
	Backup string // where its previous content is kept
	// Truncated is set when Path was cut to Size bytes; Created when it
	// was created with only its header (Size bytes, no Backup); otherwise
	// it was moved to Backup as a whole.
	Truncated bool
	Created   bool
	Size      int64
	// Dropped is how many bytes of Path are no longer replayed.
	Dropped int64
	Why     string
}

// ErrUnfixable is returned by Fix for damage it cannot repair: a damaged
// dump.pdb or a file of an unsupported format version.
var ErrUnfixable = errors.New("persist: cannot fix")

// Fix repairs a data directory so that it starts: the log is cut at the
// first damaged record (a torn tail included), in replay order. The damaged
// generation is truncated to its last good record; if its header is
// damaged, or a generation is missing, the generations from there on are
// set aside. Every later generation is set aside too, because its records
// may depend on the ones lost. If the log then ends before a missing
// generation, the end-of-generation record naming it is cut off the
// generation before; if the generation dump.pdb names is missing, it is
// created with only its header (the writes made after the snapshot are
// lost; the start then uses the snapshot alone). Nothing is deleted: a truncated file is first
// copied to <name>.bak and a file set aside is renamed to <name>.bak (or
// <name>.bak.2, … if that exists). It holds the directory's LOCK while it
// works, so it refuses to run while a server has the directory open
// (ErrLocked). It returns the actions taken (none if the directory was
// fine) and the report of a final check.
func Fix(dir string, decode Decoder) ([]FixAction, *CheckReport, error) {
	lock, err := lockDir(dir)
	if err != nil {
		return nil, nil, err
	}
	defer unlockDir(lock)
	r, err := CheckDir(dir, decode)
	if err != nil {
		return nil, nil, err
	}
	if r.SnapshotErr != nil {
		// r.SnapshotErr already carries the remedy (see the snapshot
		// decoder's error), so it is not repeated here.
		return nil, r, fmt.Errorf("%w: %s is damaged: %v", ErrUnfixable, r.Snapshot, r.SnapshotErr)
	}
	cut := -1 // index in r.Files of the first damaged file
	for i, f := range r.Files {
		if f.Problem != "" {
			if f.Version {
				return nil, r, fmt.Errorf("%w: %s: %s (written by another version of probly)", ErrUnfixable, f.Path, f.Problem)
			}
			cut = i
			break
		}
	}
	var actions []FixAction
	var aside []string // whole files to set aside, in order
	switch {
	case cut >= 0:
		f := r.Files[cut]
		if f.Header {
			aside = append(aside, f.Path)
		} else if f.Good < f.Size {
			a, err := truncateWithBackup(f.Path, f.Good)
			if err != nil {
				return actions, nil, err
			}
			a.Why = fmt.Sprintf("damage at byte offset %d (record %d): %s", f.Offset, f.Record, f.Problem)
			actions = append(actions, a)
		}
		for _, g := range r.Files[cut+1:] {
			aside = append(aside, g.Path)
		}
		if r.Gap != 0 {
			aside = append(aside, laterGens(dir, r.Gap)...)
		}
	case r.Gap != 0:
		aside = laterGens(dir, r.Gap)
	}
	for _, p := range aside {
		why := "comes after the damage"
		if cut >= 0 && p == r.Files[cut].Path {
			why = "damaged header: " + r.Files[cut].Problem
		} else if cut < 0 {
			why = fmt.Sprintf("comes after the missing %s", aofFileName(r.Gap))
		}
		a, err := setAside(p)
		if err != nil {
			return actions, nil, err
		}
		a.Why = why
		actions = append(actions, a)
	}
	if len(actions) > 0 {
		if err := syncDir(dir); err != nil {
			return actions, nil, fmt.Errorf("persist: fsync %s: %w", dir, err)
		}
	}
	after, err := CheckDir(dir, decode)
	if err != nil {
		return actions, nil, err
	}
	// The log now ends before a generation that is missing (or was set
	// aside): make the generation before it the last one, or, when the
	// snapshot's own generation is missing, create it empty.
	if after.Gap != 0 && len(laterGens(dir, after.Gap)) == 0 {
		var a FixAction
		switch n := len(after.Files); {
		case n > 0 && after.Files[n-1].Ended:
			f := after.Files[n-1]
			a, err = truncateWithBackup(f.Path, f.EndAt)
			a.Why = fmt.Sprintf("its end-of-generation record says the log continues in %s, which is missing or set aside: "+
				"the records that were there are lost", aofFileName(after.Gap))
		case n == 0 && after.Snapshot != "" && after.SnapshotErr == nil && after.Gap == after.SnapshotGen:
			p := filepath.Join(dir, aofFileName(after.Gap))
			a = FixAction{Path: p, Created: true, Size: aofHeaderSize,
				Why: fmt.Sprintf("%s says the writes made after it are in this file, which was missing: "+
					"they are lost, the start uses the snapshot alone", snapshotName)}
			err = createEmptyAOF(dir, after.Gap)
		default:
			return actions, after, nil
		}
		if err != nil {
			return actions, nil, err
		}
		actions = append(actions, a)
		if err := syncDir(dir); err != nil {
			return actions, nil, fmt.Errorf("persist: fsync %s: %w", dir, err)
		}
		if after, err = CheckDir(dir, decode); err != nil {
			return actions, nil, err
		}
	}
	return actions, after, nil
}

// createEmptyAOF creates AOF generation gen in dir with only its header,
// fsynced; it refuses to replace an existing file.
func createEmptyAOF(dir string, gen uint64) error {
	p := filepath.Join(dir, aofFileName(gen))
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("persist: create %s: %w", p, err)
	}
	_, err = f.Write(encodeAOFHeader(gen))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("persist: create %s: %w", p, err)
	}
	return nil
}

// FixFile truncates one AOF file to its last good record, after copying it
// to <file>.bak. A damaged header cannot be fixed (ErrUnfixable).
func FixFile(path string) (*FixAction, FileCheck, error) {
	if lock, err := lockIfPresent(filepath.Dir(path)); err != nil {
		return nil, FileCheck{}, err
	} else if lock != nil {
		defer unlockDir(lock)
	}
	fc, err := CheckFile(path)
	if err != nil || fc.Problem == "" {
		return nil, fc, err
	}
	if fc.Header {
		return nil, fc, fmt.Errorf("%w: %s: %s (the header is damaged; no record can be trusted)", ErrUnfixable, path, fc.Problem)
	}
	a, err := truncateWithBackup(path, fc.Good)
	if err != nil {
		return nil, fc, err
	}
	a.Why = fmt.Sprintf("damage at byte offset %d (record %d): %s", fc.Offset, fc.Record, fc.Problem)
	after, err := CheckFile(path)
	return &a, after, err
}

// lockIfPresent locks dir/LOCK if that file exists (a data directory).
func lockIfPresent(dir string) (*os.File, error) {
	if _, err := os.Stat(filepath.Join(dir, lockName)); err != nil {
		return nil, nil
	}
	return lockDir(dir)
}

// laterGens lists the AOF generations >= from in dir.
func laterGens(dir string, from uint64) []string {
	ents, _ := os.ReadDir(dir)
	var gens []uint64
	for _, e := range ents {
		if g, ok := parseAOFName(e.Name()); ok && g >= from {
			gens = append(gens, g)
		}
	}
	slices.Sort(gens)
	out := make([]string, len(gens))
	for i, g := range gens {
		out[i] = filepath.Join(dir, aofFileName(g))
	}
	return out
}

// backupName returns p.bak, or p.bak.N for the first N ≥ 2 not in use.
func backupName(p string) string {
	b := p + ".bak"
	for i := 2; ; i++ {
		if _, err := os.Lstat(b); errors.Is(err, fs.ErrNotExist) {
			return b
		}
		b = p + ".bak." + strconv.Itoa(i)
	}
}

// truncateWithBackup copies p to a backup, fsyncs the copy, then truncates
// p to size and fsyncs it.
func truncateWithBackup(p string, size int64) (FixAction, error) {
	a := FixAction{Path: p, Backup: backupName(p), Truncated: true, Size: size}
	src, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return a, fmt.Errorf("persist: open %s: %w", p, err)
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return a, err
	}
	a.Dropped = st.Size() - size
	dst, err := os.OpenFile(a.Backup, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return a, fmt.Errorf("persist: create backup: %w", err)
	}
	_, err = io.Copy(dst, io.NewSectionReader(src, 0, st.Size()))
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(a.Backup)
		return a, fmt.Errorf("persist: write backup %s: %w", a.Backup, err)
	}
	if err := src.Truncate(size); err != nil {
		return a, fmt.Errorf("persist: truncate %s: %w", p, err)
	}
	if err := src.Sync(); err != nil {
		return a, fmt.Errorf("persist: fsync %s: %w", p, err)
	}
	return a, nil
}

// setAside renames p to a backup name.
func setAside(p string) (FixAction, error) {
	a := FixAction{Path: p, Backup: backupName(p)}
	if st, err := os.Stat(p); err == nil {
		a.Dropped = st.Size()
	}
	if err := os.Rename(p, a.Backup); err != nil {
		return a, fmt.Errorf("persist: set %s aside: %w", p, err)
	}
	return a, nil
}

// Describe renders a FileCheck as one line for humans.
func (c FileCheck) Describe() string {
	name := filepath.Base(c.Path)
	switch {
	case c.Problem == "" && c.Ended:
		return fmt.Sprintf("%s: ok (%d records, %d bytes; ends with its end-of-generation record: the log continues in %s)",
			name, c.Records, c.Size, aofFileName(c.Gen+1))
	case c.Problem == "":
		return fmt.Sprintf("%s: ok (%d records, %d bytes)", name, c.Records, c.Size)
	case c.Torn:
		return fmt.Sprintf("%s: torn tail at byte offset %d (record %d, %d bytes): %s",
			name, c.Offset, c.Record, c.Size-c.Offset, c.Problem)
	case c.Version:
		return fmt.Sprintf("%s: unsupported: %s", name, c.Problem)
	default:
		var b strings.Builder
		fmt.Fprintf(&b, "%s: CORRUPT at byte offset %d (record %d): %s", name, c.Offset, c.Record, c.Problem)
		if !c.Header {
			fmt.Fprintf(&b, "; %d good records (%d bytes) before it, %d bytes from it to the end", c.Records, c.Good, c.Size-c.Good)
		}
		return b.String()
	}
}
