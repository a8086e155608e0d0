package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	lockFile       = "lock"
	identityFile   = "identity.json"
	checkpointFile = "checkpoint.json"
	chunksFile     = "chunks.jsonl"
	schemaFile     = "schema.json"
)

// Identity is what a state directory belongs to. A checkpoint is only valid for the
// pipeline and source server that produced it; the table selection may change between
// runs (the runner snapshots the tables that join and lets go of those that leave, see
// [Store.Tables]).
type Identity struct {
	// Pipeline is pipeline.name.
	Pipeline string `json:"pipeline"`
	// Source is the source server as host:port.
	Source string `json:"source"`
	// Tables is the source's table selection (tables, then " exclude " and tables.exclude)
	// the stored captured set was made with. It is not compared by [Open]: a changed
	// selection is the runner's to reconcile, and it records the new one with
	// [Store.RecordTables] once the state reflects it.
	Tables string `json:"tables"`
	// Salt is the random salt of the fields stored as a hash (a field that holds a secret,
	// see Secrets), in hex; empty when no field is hashed.
	Salt string `json:"salt,omitempty"`
	// Server is the identity of the source server behind Source (server_id, server_uuid,
	// GTID domains: the cdc package's ServerIdentity text form), recorded by the first run
	// that connected ([Store.RecordServer]); empty before. It is not compared by [Open] (it is
	// only known once connected): the runner compares it with the server's at every start.
	Server string `json:"server,omitempty"`
}

// Checkpoint is a stored position and, while a snapshot is under way, its progress.
type Checkpoint struct {
	// Position is the source position in the cdc package's text form.
	Position string `json:"position"`
	// Snapshot is the snapshot progress without its finished chunks, opaque here. (A
	// checkpoint.json written before the chunks had their own file holds them in it.)
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
	// Chunks are the snapshot's finished chunks, one JSON value each, in order; a later
	// checkpoint's Chunks extend an earlier one's. They are kept in chunks.jsonl, one a line,
	// appended as they come; checkpoint.json says how many lines count.
	Chunks [][]byte `json:"-"`
	// Schema is the source's schema history at Position, opaque here. It is kept in
	// schema.json, written only when it changes. (An older checkpoint.json holds it in it.)
	Schema json.RawMessage `json:"schema,omitempty"`
	// Shapes are the shapes the pipeline writes per table under schema.change.behavior
	// LENIENT or IGNORE (schemachange.Mapper.Encode), opaque here.
	Shapes json.RawMessage `json:"shapes,omitempty"`
	// SavedAt is when the checkpoint was written.
	SavedAt time.Time `json:"saved_at"`
}

// stored is the JSON of checkpoint.json.
type stored struct {
	Checkpoint
	// ChunkCount is how many lines of chunks.jsonl are the checkpoint's.
	ChunkCount int `json:"chunks,omitempty"`
	// SchemaFile is set when the schema history is in schema.json.
	SchemaFile bool `json:"schema_file,omitempty"`
}

// Store is an open, locked state directory. It is not safe for concurrent use.
type Store struct {
	dir     string
	lock    *os.File
	secrets Secrets  // nil: none
	id      Identity // as stored
	tables  string   // the requested Identity.Tables, as it is stored (hashed when secret)
	// What this Store wrote: chunks.jsonl holds exactly the chunks lines of the last Save
	// when chunksOK, and schema.json holds schema when schemaOK (both false until the
	// first Save: a crash may have left more).
	chunksOK, schemaOK bool
	chunks             int
	schema             []byte
}

// ErrLocked is returned by Open when another process holds the directory's lock.
var ErrLocked = errors.New("state directory is locked by another ingest process")

// MismatchError is returned by Open when the directory belongs to another pipeline or
// source.
type MismatchError struct {
	Dir       string
	Stored    Identity
	Requested Identity
}

func (e *MismatchError) Error() string {
	var diffs []string
	add := func(what, stored, requested string) {
		switch {
		case stored == requested:
		case strings.HasPrefix(stored, hashPrefix) || strings.HasPrefix(requested, hashPrefix):
			diffs = append(diffs, fmt.Sprintf("another %s (it holds a secret, so only its hash is stored)", what))
		default:
			diffs = append(diffs, fmt.Sprintf("%s %q (this pipeline: %q)", what, stored, requested))
		}
	}
	add("pipeline", e.Stored.Pipeline, e.Requested.Pipeline)
	add("source", e.Stored.Source, e.Requested.Source)
	return fmt.Sprintf("state %s belongs to %s; use another --state directory, or remove %s to start this pipeline afresh",
		e.Dir, strings.Join(diffs, ", "), e.Dir)
}

// Open creates dir if needed, takes its lock and checks (or, the first time, records) the
// identity. It fails with ErrLocked when another process holds the lock and with a
// *MismatchError when the directory belongs to another pipeline or source server. A table
// selection other than the stored one is accepted and not recorded yet ([Store.Tables],
// [Store.RecordTables]).
func Open(dir string, id Identity) (*Store, error) { return OpenSecret(dir, id, nil) }

// OpenSecret is Open for a pipeline whose identity or checkpoint may hold secret values:
// sec tells which (secrets.Scrubber). A field of the identity that holds a secret is stored
// as a salted SHA-256 and compared as such; the checkpoint is stored with each secret
// value replaced by its placeholder, and read back with the values (docs/pipeline.md,
// "Placeholders"). A nil sec is Open.
func OpenSecret(dir string, id Identity, sec Secrets) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state %s: %w", dir, err)
	}
	lock, err := takeLock(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, lock: lock, secrets: sec}
	if err := s.checkIdentity(id); err != nil {
		s.Close()
		return nil, err
	}
	s.tables = id.stored(s.saltOr(), sec).Tables
	return s, nil
}

func takeLock(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("state %s (held by pid %s): %w; stop the other `ingest apply` of this pipeline first",
				dir, strings.TrimSpace(string(holder)), ErrLocked)
		}
		return nil, fmt.Errorf("state %s: lock: %w", dir, err)
	}
	// The pid is informational (for the message above); the flock is what excludes.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

func (s *Store) checkIdentity(id Identity) error {
	var stored Identity
	err := readJSON(filepath.Join(s.dir, identityFile), &stored)
	if errors.Is(err, fs.ErrNotExist) {
		s.id = id.stored(newSalt(), s.secrets)
		return writeJSON(s.dir, identityFile, s.id)
	}
	if err != nil {
		return err
	}
	salt := stored.Salt
	if salt == "" {
		salt = newSalt()
	}
	want := id.stored(salt, s.secrets)
	want.Server = stored.Server
	if !id.matches(stored) {
		return &MismatchError{Dir: s.dir, Stored: stored, Requested: want}
	}
	want.Tables = stored.Tables // recorded by RecordTables, once the state reflects it
	if want.Salt == "" && strings.HasPrefix(stored.Tables, hashPrefix) {
		want.Salt = stored.Salt
	}
	s.id = want
	if want != stored {
		// Stored before secrets were hashed (the plain value is replaced now), or a field
		// that was secret is not any more.
		return writeJSON(s.dir, identityFile, want)
	}
	return nil
}

// saltOr returns the directory's salt, or a new one when it has none.
func (s *Store) saltOr() string {
	if s.id.Salt != "" {
		return s.id.Salt
	}
	return newSalt()
}

// Tables returns the table selection the stored state was made with (hashed when it holds
// a secret), which may differ from the one given to Open until RecordTables.
func (s *Store) Tables() string { return s.id.Tables }

// TablesChanged reports whether the table selection given to Open differs from the stored
// one.
func (s *Store) TablesChanged() bool { return s.tables != s.id.Tables }

// RecordTables records the table selection given to Open as the state's: call it once the
// stored checkpoint reflects that selection (the tables that joined it are snapshotted, or
// marked to be). It changes nothing else of the identity.
func (s *Store) RecordTables() error {
	if !s.TablesChanged() {
		return nil
	}
	id := s.id
	id.Tables = s.tables
	if err := writeJSON(s.dir, identityFile, id); err != nil {
		return err
	}
	s.id = id
	return nil
}

// Server returns the server identity recorded in the directory, or "" when none is.
func (s *Store) Server() string { return s.id.Server }

// RecordServer records the source server's identity in the directory's identity, for later
// runs to compare with. It changes nothing else of the identity.
func (s *Store) RecordServer(server string) error {
	id := s.id
	id.Server = server
	if err := writeJSON(s.dir, identityFile, id); err != nil {
		return err
	}
	s.id = id
	return nil
}

// Dir returns the directory.
func (s *Store) Dir() string { return s.dir }

// Load returns the last stored checkpoint, or nil when there is none.
func (s *Store) Load() (*Checkpoint, error) { return load(s.dir, s.reveal) }

// load reads the checkpoint of dir, with reveal applied to each stored document (the
// secret values that Save replaced by placeholders put back).
func load(dir string, reveal func([]byte) []byte) (*Checkpoint, error) {
	var st stored
	err := readJSONWith(filepath.Join(dir, checkpointFile), &st, reveal)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cp := st.Checkpoint
	if st.ChunkCount > 0 {
		if cp.Chunks, err = readLines(filepath.Join(dir, chunksFile), st.ChunkCount); err != nil {
			return nil, err
		}
		for i, c := range cp.Chunks {
			cp.Chunks[i] = reveal(c)
		}
	}
	if st.SchemaFile {
		path := filepath.Join(dir, schemaFile)
		if cp.Schema, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("state %s is damaged (%v); restore it from a backup or remove the directory to start afresh", path, err)
		}
		cp.Schema = reveal(cp.Schema)
	}
	return &cp, nil
}

// readLines returns the first n lines of path (without their newlines).
func readLines(path string, n int) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		lines := bytes.SplitN(b, []byte("\n"), n+1)
		if len(lines) > n {
			return lines[:n], nil
		}
		err = fmt.Errorf("%d lines, checkpoint.json counts %d", len(lines)-1, n)
	}
	return nil, fmt.Errorf("state %s is damaged (%v); restore it from a backup or remove the directory to start afresh", path, err)
}

// Save stores cp atomically. On error (a full disk, say) the previous checkpoint is intact.
// It writes only what changed since the last Save: the chunks beyond the last ones are
// appended to chunks.jsonl, schema.json is written when the history changed, and
// checkpoint.json (position, the small rest of the progress, the chunk count) each time.
func (s *Store) Save(cp Checkpoint) error {
	if cp.SavedAt.IsZero() {
		cp.SavedAt = time.Now().UTC()
	}
	st := stored{Checkpoint: cp, ChunkCount: len(cp.Chunks), SchemaFile: cp.Schema != nil}
	st.Schema = nil
	if err := s.saveChunks(cp.Chunks); err != nil {
		return err
	}
	if cp.Schema != nil && (!s.schemaOK || !bytes.Equal(cp.Schema, s.schema)) {
		s.schemaOK = false
		if err := writeFile(s.dir, schemaFile, s.hide(cp.Schema)); err != nil {
			return err
		}
		s.schema, s.schemaOK = cp.Schema, true
	}
	return writeJSONWith(s.dir, checkpointFile, st, s.hide)
}

// hide and reveal are the Secrets' HideJSON and RevealJSON, or the identity without them.
func (s *Store) hide(b []byte) []byte {
	if s.secrets == nil {
		return b
	}
	return s.secrets.HideJSON(b)
}

func (s *Store) reveal(b []byte) []byte {
	if s.secrets == nil {
		return b
	}
	return s.secrets.RevealJSON(b)
}

// saveChunks makes the first lines of chunks.jsonl the chunks, before checkpoint.json
// counts them: it appends the new ones when the file holds the earlier ones, and replaces
// the file otherwise (the first Save of a Store, which does not know what a crash may have
// left after the counted lines). No chunks leave the file as it is: checkpoint.json then
// counts none of its lines, and the next chunks replace it.
func (s *Store) saveChunks(chunks [][]byte) error {
	switch {
	case len(chunks) == 0:
		s.chunksOK, s.chunks = false, 0
		return nil
	case s.chunksOK && len(chunks) == s.chunks:
		return nil
	case s.chunksOK && len(chunks) > s.chunks:
		s.chunksOK = false
		if err := appendLines(s.dir, chunksFile, s.hideAll(chunks[s.chunks:])); err != nil {
			return err
		}
		s.chunksOK, s.chunks = true, len(chunks)
		return nil
	}
	var b []byte
	for _, c := range s.hideAll(chunks) {
		b = append(append(b, c...), '\n')
	}
	s.chunksOK = false
	if err := writeFile(s.dir, chunksFile, b); err != nil {
		return err
	}
	s.chunksOK, s.chunks = true, len(chunks)
	return nil
}

// hideAll returns the documents with s.hide applied to each.
func (s *Store) hideAll(docs [][]byte) [][]byte {
	if s.secrets == nil {
		return docs
	}
	out := make([][]byte, len(docs))
	for i, d := range docs {
		out[i] = s.hide(d)
	}
	return out
}

// appendLines appends lines to dir/name and syncs it.
func appendLines(dir, name string, lines [][]byte) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("state %s: write %s: %w", dir, name, err)
	}
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	if _, err = f.Write(b); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("state %s: write %s: %w", dir, name, err)
	}
	return nil
}

// Reset removes the stored checkpoint (the identity and the lock stay): the pipeline
// starts afresh.
func (s *Store) Reset() error {
	for _, name := range []string{checkpointFile, chunksFile, schemaFile} {
		if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("state %s: %w", s.dir, err)
		}
	}
	s.chunksOK, s.schemaOK, s.chunks, s.schema = false, false, 0, nil
	return syncDir(s.dir)
}

// Close releases the lock. It is safe to call more than once.
func (s *Store) Close() error {
	if s.lock == nil {
		return nil
	}
	err := s.lock.Close() // closing the descriptor releases the flock
	s.lock = nil
	return err
}

func readJSON(path string, v any) error {
	return readJSONWith(path, v, func(b []byte) []byte { return b })
}

// readJSONWith is readJSON with edit applied to the document before it is decoded.
func readJSONWith(path string, v any, edit func([]byte) []byte) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b = edit(b)
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("state %s is damaged (%v); restore it from a backup or remove the directory to start afresh", path, err)
	}
	return nil
}

// writeJSON replaces dir/name atomically with v's JSON and a newline.
func writeJSON(dir, name string, v any) error {
	return writeJSONWith(dir, name, v, func(b []byte) []byte { return b })
}

// writeJSONWith is writeJSON with edit applied to the encoded document.
func writeJSONWith(dir, name string, v any, edit func([]byte) []byte) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("state %s: encode %s: %w", dir, name, err)
	}
	b = edit(b)
	return writeFile(dir, name, append(b, '\n'))
}

// writeFile replaces dir/name atomically: temporary file, fsync, rename, fsync of dir.
func writeFile(dir, name string, b []byte) error {
	tmp, err := os.CreateTemp(dir, name+".tmp*")
	if err != nil {
		return fmt.Errorf("state %s: write %s: %w", dir, name, err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err = tmp.Write(b); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("state %s: write %s: %w", dir, name, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Peek reads a state directory without taking its lock (for `ingest plan`, which may run
// beside `apply`). It returns nil for what is not there.
func Peek(dir string) (*Identity, *Checkpoint, error) {
	var id Identity
	idErr := readJSON(filepath.Join(dir, identityFile), &id)
	if idErr != nil && !errors.Is(idErr, fs.ErrNotExist) {
		return nil, nil, idErr
	}
	cp, err := load(dir, func(b []byte) []byte { return b })
	if err != nil {
		return nil, nil, err
	}
	if idErr != nil {
		return nil, cp, nil
	}
	return &id, cp, nil
}
