package persist

import (
	"errors"
	"fmt"
	"os"
)

// Transactions in the AOF. A transaction (MULTI/EXEC) that writes is
// logged as one unit: a record ["MULTI"], the records of its writes, and
// a record ["EXEC"], as Redis writes them. Recovery applies a unit only
// once its EXEC record has been read (all of it or none of it); a file
// that ends inside a unit has a torn tail, cut off at the unit's MULTI
// record like any torn record (recover.go). A transaction that writes
// nothing logs nothing. A unit one of whose records could not be logged
// ends with a record ["DISCARD"] when the log still accepts records
// (recovery drops the unit), or is left open; the log then refuses
// records until a snapshot starts the next generation, and a unit left
// open at the end of a generation is dropped too. The records are ordinary framed records (format
// version 2 unchanged): files without transactions read as before.
//
// The caller makes sure no other record is appended between BeginTx and
// EndTx (the server runs EXEC under the exclusive command gate, which
// every writer holds shared), and that no snapshot cut falls inside (a
// background cut holds the gate shared; SAVE is refused inside MULTI).

// txPhase is where the unit being appended is.
type txPhase uint8

const (
	txNone    txPhase = iota // no transaction
	txOpen                   // BeginTx ran, nothing logged yet
	txStarted                // the MULTI record is buffered
	txBroken                 // a record of the unit was refused: no EXEC record
)

var (
	multiRecord = [][]byte{[]byte("MULTI")}
	execRecord  = [][]byte{[]byte("EXEC")}
	discardRec  = [][]byte{[]byte("DISCARD")}
	multiSize   = mustPayloadSize(multiRecord)
)

func mustPayloadSize(args [][]byte) int {
	n, err := payloadSize(args)
	if err != nil {
		panic(err)
	}
	return n
}

// ErrTxBroken is returned by EndTx when a record of the transaction could
// not be appended: the unit has no EXEC record, so recovery drops it
// whole, and none of it may be acknowledged.
var ErrTxBroken = errors.New("persist: a record of the transaction could not be logged; the transaction is not durable")

// BeginTx opens a transaction unit: the first record appended after it is
// preceded by a MULTI record.
func (d *DB) BeginTx() {
	d.mu.Lock()
	d.tx = txOpen
	d.mu.Unlock()
}

// EndTx closes the unit BeginTx opened: it appends the EXEC record if the
// unit logged anything and returns its sequence number (0 when it logged
// nothing), to Wait on like any record. It returns ErrTxBroken, or the
// append's error, when the unit is not complete in the log.
func (d *DB) EndTx() (uint64, error) {
	d.mu.Lock()
	phase, multi := d.tx, d.txMulti
	if phase != txStarted {
		d.tx, d.txMulti = txNone, false
		d.mu.Unlock()
		if phase != txBroken {
			return 0, nil
		}
		if multi {
			// Close the unit so that recovery drops it, if the log still
			// takes records; if not, it takes none until the next
			// generation, and the open unit is dropped at its end.
			_, _ = d.append(discardRec, true)
		}
		return 0, ErrTxBroken
	}
	d.mu.Unlock()
	return d.append(execRecord, true)
}

// openTxLocked buffers the unit's MULTI record before its first record,
// or ends the unit with the EXEC record being appended (end). d.mu is
// held.
func (d *DB) openTxLocked(end bool) {
	switch {
	case end:
		d.tx, d.txMulti = txNone, false
	case d.tx == txOpen:
		d.buf = appendFrame(d.buf, multiRecord, multiSize)
		d.seq.Add(1)
		d.changes.Add(1)
		d.tx, d.txMulti = txStarted, true
	}
}

// breakTxLocked records that a record of the unit was refused (or ends
// the unit, if that record was its EXEC). d.mu is held.
func (d *DB) breakTxLocked(end bool) {
	switch {
	case end:
		d.tx, d.txMulti = txNone, false
	case d.tx != txNone:
		d.tx = txBroken
	}
}

func (d *DB) breakTx(end bool) {
	d.mu.Lock()
	d.breakTxLocked(end)
	d.mu.Unlock()
}

// txWord returns "MULTI", "EXEC" or "DISCARD" when args is that
// transaction record, "" for any other record.
func txWord(args [][]byte) string {
	if len(args) != 1 {
		return ""
	}
	switch string(args[0]) {
	case "MULTI":
		return "MULTI"
	case "EXEC":
		return "EXEC"
	case "DISCARD":
		return "DISCARD"
	}
	return ""
}

// cutOpenTx repairs the current generation p when its scan ended inside a
// transaction unit (sc.txOpen): at a torn record, at the end of the file,
// or at an end-of-generation record whose switch was interrupted. The
// unit never got its EXEC record, so it was never acknowledged: the file
// is truncated at the unit's MULTI record (durably), as a torn record is.
// Damage that is not a torn write refuses the start as elsewhere.
func (d *DB) cutOpenTx(f *os.File, p string, sc scanResult, size int64, last bool, res replayed) (replayed, error) {
	if sc.good != size {
		torn, reason, err := damage(f, size, sc.good, sc.reason, last)
		if err != nil {
			return res, fmt.Errorf("persist: read %s: %w", p, err)
		}
		if !torn {
			return res, fmt.Errorf("%w: %s at byte offset %d (record %d): %s (refusing to start; nothing was changed on disk)%s",
				ErrCorrupt, p, sc.good, sc.records+1, reason, d.fixHint())
		}
	}
	d.log.Warn("persist: truncating a transaction without its EXEC record at the end of the AOF (never acknowledged)",
		"file", p, "offset", sc.txAt, "bytes", size-sc.txAt)
	if err := f.Truncate(sc.txAt); err != nil {
		return res, fmt.Errorf("persist: truncate torn tail of %s: %w", p, err)
	}
	if err := d.fsync(f); err != nil {
		return res, fmt.Errorf("persist: truncate torn tail of %s: %w", p, err)
	}
	res.size, res.records = sc.txAt, sc.txRecords
	return res, nil
}
