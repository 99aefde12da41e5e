package confine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"syscall"
)

// An unconfined agent could change anything its user may, the vault's
// database included, and snapshots cannot tell its writes to a database
// from those of the processes that use it meanwhile. So a sealed folder's
// files must not change at all, and a sealed SQLite database is held to
// what only a rogue writer breaks: its files keep their identity (none is
// replaced, removed or moved), the database file stays a whole number of
// pages, and the write-ahead log stays at least as long as its index (the
// -shm file) says. SQLite grows the log before it indexes new frames, and
// resets the index before it truncates the log, so no writer of its own
// breaks the last rule at any moment; a log cut short behind SQLite's back
// loses committed transactions, and the next commit corrupts the database.

// dbFiles returns the files of a SQLite database in WAL mode.
func dbFiles(db string) []string { return []string{db, db + "-wal", db + "-shm"} }

// fileID names a file for good: the same path with another inode is
// another file.
type fileID struct{ dev, ino uint64 }

// sealState is what a run remembers of its sealed paths before it starts.
type sealState struct {
	files map[string]fileState
	dbs   map[string]fileID // the database files that exist
}

// sealBefore records the sealed paths, leaving out skip.
func sealBefore(spec Spec, skip []string) sealState {
	st := sealState{dbs: make(map[string]fileID)}
	for _, db := range spec.SealDB {
		for _, f := range dbFiles(db) {
			skip = append(skip, f)
			if id, ok := idOf(f); ok {
				st.dbs[f] = id
			}
		}
	}
	st.files = snapshot(spec.Seal, skipSet(skip))
	return st
}

// sealAfter returns the sealed paths that changed, sorted: files created,
// changed or deleted, and database files that were replaced, removed or
// cut short.
func sealAfter(spec Spec, skip []string, before sealState) []string {
	for _, db := range spec.SealDB {
		skip = append(skip, dbFiles(db)...)
	}
	bad := changed(before.files, snapshot(spec.Seal, skipSet(skip)))
	for f, id := range before.dbs {
		if now, ok := idOf(f); !ok || now != id {
			bad = append(bad, f)
		}
	}
	for _, db := range spec.SealDB {
		if e := checkDB(db); e != nil {
			bad = append(bad, e.path)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}

// idOf returns the identity of the file at path, if it exists.
func idOf(path string) (fileID, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileID{}, false
	}
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(sys.Dev), uint64(sys.Ino)}, true
}

// dbError is a sealed database file that breaks a rule.
type dbError struct {
	path, why string
}

func (e *dbError) Error() string { return e.path + ": " + e.why }

// checkDB checks the rules on the files of the SQLite database db that do
// not need SQLite: the database file is a whole number of pages, and the
// write-ahead log holds every frame its index names. A missing database
// has nothing to check; a log or index that a checkpoint is resetting
// meanwhile is read again.
func checkDB(db string) *dbError {
	page, err := pageSize(db)
	if err != nil {
		return nil // no database, or not SQLite's: nothing to hold it to
	}
	if fi, err := os.Stat(db); err == nil && fi.Size()%page != 0 {
		return &dbError{db, fmt.Sprintf("%d bytes is not a whole number of %d-byte pages", fi.Size(), page)}
	}
	wal, shm := db+"-wal", db+"-shm"
	for range 100 {
		before, err := walIndex(shm)
		if err != nil {
			return nil // no index: no log in use
		}
		fi, err := os.Stat(wal)
		if errors.Is(err, fs.ErrNotExist) && before.mxFrame == 0 {
			return nil
		}
		after, err := walIndex(shm)
		if err != nil || after != before {
			continue // moved meanwhile: look again
		}
		var size int64
		if fi != nil {
			size = fi.Size()
		}
		if need := walSize(before); size < need {
			return &dbError{wal, fmt.Sprintf("%d bytes, but its index names frames up to byte %d", size, need)}
		}
		return nil
	}
	return nil // too busy to tell: no finding rather than a false one
}

// walHeader is the part of the header of a write-ahead log index (the
// -shm file, in the machine's byte order) that says how long the log is.
type walHeader struct {
	change  uint32 // bumped by every transaction
	isInit  uint8
	page    uint32 // the page size
	mxFrame uint32 // the last valid frame
	salt    [2]uint32
}

// walIndex reads the first copy of the index header.
func walIndex(shm string) (walHeader, error) {
	f, err := os.Open(shm)
	if err != nil {
		return walHeader{}, err
	}
	defer f.Close()
	var b [48]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return walHeader{}, err
	}
	ne := binary.NativeEndian
	h := walHeader{
		change:  ne.Uint32(b[8:]),
		isInit:  b[12],
		page:    uint32(ne.Uint16(b[14:])),
		mxFrame: ne.Uint32(b[16:]),
		salt:    [2]uint32{ne.Uint32(b[32:]), ne.Uint32(b[36:])},
	}
	if h.page == 1 {
		h.page = 1 << 16
	}
	return h, nil
}

// walSize returns the least size of a log that holds the frames h names:
// a 32-byte header, then frames of a 24-byte header and a page each.
func walSize(h walHeader) int64 {
	if h.isInit == 0 || h.mxFrame == 0 {
		return 0
	}
	return 32 + int64(h.mxFrame)*(24+int64(h.page))
}

// pageSize reads the page size from a SQLite database's header.
func pageSize(db string) (int64, error) {
	f, err := os.Open(db)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var b [18]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return 0, err
	}
	if string(b[:16]) != "SQLite format 3\x00" {
		return 0, errors.New("not a SQLite database")
	}
	p := int64(binary.BigEndian.Uint16(b[16:]))
	if p == 1 {
		p = 1 << 16
	}
	return p, nil
}
