// Package persist keeps the server's key space on disk, the Redis way: an
// append-only file (AOF) of mutating commands plus point-in-time snapshots
// that compact it.
//
// # What it promises
//
//   - When [DB.Wait] returns nil for a sequence number, that record and
//     every earlier one have been written to the operating system
//     (write(2), page cache), in every fsync mode, so a crash of the process
//     alone (kill -9, panic) loses nothing acknowledged after Wait. With
//     Options.BufferAppends (the server's setting), [DB.Append] only adds
//     the record to an in-memory buffer, as Redis does with its AOF buffer,
//     and the first waiter writes the whole buffer with one write(2):
//     concurrent writers and a pipeline share it. Records of callers that
//     never Wait are written within a second (and at rotation and Close).
//     Without it, Append returns once its record is written.
//   - Fsync "always": when [DB.Wait] returns nil for a sequence number, that
//     record and every earlier one have been fsynced. A write acknowledged
//     only after Wait survives kill -9 and power loss (as far as the disk
//     honours fsync). Concurrent waiters share fsyncs (group commit).
//   - Fsync "everysec": a background goroutine fsyncs once per second when
//     there is unsynced data, so an OS crash or power loss loses about the
//     last second of writes.
//   - Fsync "no": the OS decides when to write back; the package fsyncs only
//     on rotation and Close.
//   - Recovery ([Open]) loads the newest complete snapshot and then replays,
//     in order, every AOF record written after the snapshot's cut. A torn
//     last record of the last AOF (a crash in the middle of a write) is cut
//     off with a warning that says how many bytes were dropped; damage
//     anywhere else stops the start with an error that names the file and
//     the byte offset ([ErrCorrupt]). Nothing is decoded into the caller's
//     state before it has passed its checksum. Snapshot entries carry each
//     key's expire time (format version 2; version 1 files, without times,
//     are still read): a key whose time has passed is not loaded, and a
//     live key's time is handed to replay as the record
//     "PEXPIREAT key unix-ms" right after the key is loaded.
//   - Nothing is skipped silently. Every generation followed by another
//     ends with an end-of-generation record (AOF format version 2) naming
//     the next generation and counting its own records, and dump.pdb
//     names the generation that follows it. So a start refuses, naming the
//     file and the remedy, a generation that is missing (deleted, also the
//     one after dump.pdb and the last one: [ErrMissingGeneration]) or cut
//     short (truncated at a record boundary or to its bare header, or a
//     record removed: [ErrCorrupt]). A generation holding only its header
//     is valid only where nothing says records followed it (the newest
//     generation). Files of format version 1 (written before these records
//     existed) are still read, without these checks.
//   - Allocation sizes read from files are bounded by the bytes the file
//     actually holds, so a damaged or hostile file cannot make Open allocate
//     more than a small multiple of its size.
//   - A failed write (for example ENOSPC) is returned (by Append, or with
//     BufferAppends by Wait, to every caller whose record was in the failed
//     buffer: those records are dropped) and the partial bytes are cut off
//     again, so the log stays well-formed. The
//     caller may already have changed memory (a Bloom add sets bits before
//     it is logged), so from then on memory and log may disagree: every
//     write is refused with [ErrOutOfSync] ([DB.WriteGate], which
//     keyspace.Store.Update consults before running a write) until a
//     snapshot, which writes memory as it is, succeeds. [DB.StartAuto]
//     retries that snapshot 5 s after the failure, backing off to every
//     30 s, so writes resume by themselves once space is back; the retries
//     reuse the (still empty) generation the first attempt switched to, so
//     a disk that stays full gains at most one AOF file.
//     [DB.LastWriteOK] reports false meanwhile (INFO aof_last_write_status). Without this, a client retrying a failed BF.ADD would
//     get ":0" for an item that is in memory but in no file, and lose it at
//     the next restart. If cutting the partial bytes off or an fsync fails,
//     the DB refuses all further appends with [ErrFailed] (Linux may drop
//     dirty pages after a failed fsync, so retrying could silently lose
//     data); restart the process to recover from what is on disk.
//   - A damaged AOF that stops the start is reported with the file, the
//     byte offset and the record number, and the error tells the operator
//     to run `probly check-aof` ([CheckDir], [Fix]): it truncates the log
//     to its last good record, keeping backups (*.bak).
//
// # Files
//
// A data directory holds:
//
//	appendonly.<gen>.aof   AOF generations (gen = 1, 2, …; contiguous)
//	dump.pdb               the newest complete snapshot
//	LOCK                   advisory lock (flock) held while a DB is open
//	*.tmp                  in-flight snapshot / next-AOF files; removed by Open
//	                       (appendonly.<gen>.aof.tmp also proves to Open that a switch
//	                       to <gen> was interrupted)
//
// A snapshot records the AOF generation that follows its cut; recovery
// replays AOF generations >= that number. The byte layout of both formats
// is in docs/FORMATS.md (sections "AOF" and "Snapshot").
//
// # Snapshots
//
// [DB.Snapshot] takes a consistent cut with [keyspace.Store.FreezeCOW]:
// while every shard lock is held it fsyncs the current AOF and switches to
// the next generation (pre-created outside the locks, so the stall is one
// small write (the end-of-generation record), one fsync, a rename and a
// directory fsync: well under a millisecond to a few milliseconds, whatever
// the data size). When the current generation holds no record yet (after a
// failed snapshot, or a snapshot with no write since), the cut keeps it and
// no file is created. Nothing is copied at the
// cut: until the snapshot is written, the first write to each key clones
// that key's value (copy-on-write, under that key's shard lock only), and
// the snapshot reads the values as they were at the cut. (The previous
// design cloned every value with all shard locks held: 1.3 s of stalled
// writes for 1 GiB of values; now 0.6 ms.) The snapshot is then written
// to a temporary file one shard at a time: a shard is listed under its
// read lock, encoded without any lock, and released from copy-on-write,
// so writes stop cloning as soon as their shard is on disk and no list of
// every key is built or sorted (format version 4 lets the entries come in
// any order; about 0.5 µs per small key, BenchmarkSnapshotStore). The
// writer yields the processor after each shard, so that on one core the
// commands served meanwhile wait for one shard's encoding at most. The
// file is then fsynced, renamed to dump.pdb,
// the directory is fsynced, and only then are the older AOF generations
// deleted. If anything fails (ENOSPC included), the previous dump.pdb and
// every AOF stay, so nothing is lost; [DB.LastSaveOK] reports false. Values
// must implement [encoding.BinaryMarshaler], and their read methods
// (MarshalBinary, Clone, WriteTo) must be safe to call concurrently. A
// value that also implements [io.WriterTo] (writing exactly its
// MarshalBinary bytes) is streamed instead, never held encoded in memory:
// it is encoded twice, once for the record's length and checksum, once
// to the file. Runs of zero bytes are stored as counts (format version 3,
// docs/FORMATS.md), so a large filter that holds few items takes little
// disk, and reading its untouched pages to save it does not make them
// resident. Loading decodes a large value whose type registers a
// streaming decoder (internal/codec, Decoder.Read) in place: allocated
// once, filled in pieces, pages of zero bytes never written.
//
// # Automatic snapshots
//
// [DB.StartAuto] runs Redis's serverCron rules ten times a second: a save
// rule "<seconds> <changes>" ([DB.SetSaveRules]) fires when at least
// <changes> records were logged and more than <seconds> passed since the
// last successful snapshot; an AOF rewrite ([DB.SetAutoRewrite], Redis's
// auto-aof-rewrite-percentage and -min-size) fires when dump.pdb plus the
// AOF exceed the minimum size and the AOF has reached the percentage of
// dump.pdb's size. In probly a rewrite is a snapshot: it compacts the AOF.
// After a failed snapshot no automatic one starts for [DB.RetryDelay]: 5 s,
// doubling with each consecutive failure up to 30 s, reset by a success.
//
// # Metrics
//
// [DB.Rewrites], [DB.SnapshotStats] (by trigger, duration, cut stall),
// [DB.FsyncStats] and Options.OnFsync / [DB.SetOnFsync] (the duration of
// every AOF fsync) feed the server's metrics.
//
// # Concurrency
//
// All methods of DB are safe for concurrent use. Append serializes callers
// on one mutex: the order of records in the buffer, and so in the file, is
// the order in which Append calls were made. For the snapshot cut to be consistent, every
// mutation must be logged while holding the lock that protects it
// (keyspace.Txn.Log does this). At most one snapshot runs at a time.
//
// # Cost
//
// Append: one encode into the shared buffer, under a mutex. Wait: at most
// one write(2) of the buffer in flight, shared by every record buffered
// before it started (appends continue into a second buffer meanwhile);
// with "always", at most one fsync in flight, shared by all waiters that
// arrive meanwhile. Snapshot: memory for a clone of every value written while its
// shard is not yet written (copy-on-write, at most the size of the key space),
// one shard's list of entries and one encoded small value at a time; the
// file is written sequentially. Recovery reads
// every file once (the snapshot is read once, verified record by record and
// as a whole before any value is handed to load).
package persist
