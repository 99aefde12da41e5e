package ingest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"cairn"
	"cairn/admit"
	"cairn/agent"
	"cairn/convert"
	"cairn/durable"
	"cairn/store"
	"cairn/vault"
)

// Options configure a Service. The zero value gives the defaults.
type Options struct {
	// Logger receives logs. Default: discard.
	Logger *slog.Logger
	// Now returns the current time. Default time.Now.
	Now func() time.Time
	// Crash, when set, is called at named points (crash tests).
	Crash func(point string)
	// Env is added to command agents' environment.
	Env []string
	// Activity, when set, also receives what agents run by this process do,
	// as they do it; every process records it as "ingest.activity" events
	// whether or not this is set.
	Activity func(source *Source, kind, text string)
	// Tools, when set, serves cairn's MCP tools to agents on their
	// workspaces; Program is the cairn executable their MCP clients start
	// to reach them (default: this one). See agent.Env.
	Tools   agent.ServeTools
	Program string
	// Drafts, when set, opens cairn's tools on a job's draft for agents
	// that work only through them (the built-in agent).
	Drafts agent.DraftTools
}

// Service ingests sources into one vault.
type Service struct {
	v    *vault.Vault
	st   Storage
	jobs durable.Storage // the queue's records, for the queue Queue makes
	// qmu guards q, the queue made on first use (Queue) or set (SetQueue).
	qmu sync.Mutex
	q   *durable.Queue
	// runMu guards runs, how many callers of StartJobs have not stopped.
	runMu    sync.Mutex
	runs     int
	log      *slog.Logger
	now      func() time.Time
	crash    func(string)
	env      []string
	activity func(*Source, string, string)
	tools    agent.ServeTools
	program  string
	drafts   agent.DraftTools
	// background is the work runs left behind (removing workspaces),
	// waited for by Close.
	background sync.WaitGroup
	// folder is held while main's folder is synced and while a command
	// agent runs in snapshot mode, so the one is never taken for the other.
	folder sync.Mutex
	// syncs counts the folder syncs scheduled and not yet done; several
	// admissions close together share one.
	syncs     sync.WaitGroup
	syncMu    sync.Mutex
	syncQueue bool
	// conv converts sources that are not Markdown or text (HTML, PDF);
	// its PDF engine starts on the first PDF.
	conv *convert.Converter
}

// New returns the ingest service of a vault, which keeps its sources'
// records in st and the records of the job queue it makes (Queue) in jobs:
// for the vault's SQLite database, sqlingest.New(v.DB) and
// sqldurable.New(v.DB). Register Decided with the vault's admission
// pipeline too (once), so that sources' statuses follow their proposals
// whatever decides them.
func New(v *vault.Vault, st Storage, jobs durable.Storage, opts *Options) *Service {
	if opts == nil {
		opts = &Options{}
	}
	s := &Service{
		conv:     convert.NewConverter(),
		v:        v,
		st:       st,
		jobs:     jobs,
		log:      cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))),
		now:      opts.Now,
		crash:    opts.Crash,
		env:      opts.Env,
		activity: opts.Activity,
		tools:    opts.Tools,
		program:  opts.Program,
		drafts:   opts.Drafts,
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Register adds the ingest job's worker to workers.
func (s *Service) Register(workers *river.Workers) { river.AddWorker(workers, &worker{s: s}) }

// SetQueue sets the queue jobs are enqueued on, in place of the one Queue
// makes; call it before Add.
func (s *Service) SetQueue(q *durable.Queue) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	s.q = q
}

// Queue returns the queue the service enqueues its jobs on and runs them
// from. The first call makes it, on the vault's write connection, from the
// config newConfig returns (an error from it is returned, and the next call
// tries again); later calls return the same queue and do not call
// newConfig. A method of the service that needs the queue before anyone
// asked for it makes it from QueueConfig. SetQueue replaces it.
func (s *Service) Queue(ctx context.Context, newConfig func() (durable.Config, error)) (*durable.Queue, error) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.q != nil {
		return s.q, nil
	}
	cfg, err := newConfig()
	if err != nil {
		return nil, err
	}
	q, err := s.v.NewQueue(s.jobs, cfg)
	if err != nil {
		return nil, err
	}
	s.q = q
	return q, nil
}

// StartJobs starts running jobs in this process on the service's queue
// (see Queue) for one more caller: the queue runs until each caller has
// called StopJobs, so an ingest that runs its jobs here and a worker in
// the same process do not stop each other's.
func (s *Service) StartJobs(ctx context.Context) error {
	q, err := s.queue(ctx)
	if err != nil {
		return err
	}
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.runs == 0 {
		if err := q.Start(ctx); err != nil {
			return err
		}
	}
	s.runs++
	return nil
}

// StopJobs ends one caller's StartJobs; the last one stops the queue
// (durable.Queue.Stop: running jobs finish, or have their contexts
// cancelled when ctx ends). Without a caller running jobs it does nothing.
func (s *Service) StopJobs(ctx context.Context) error {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.runs == 0 {
		return nil
	}
	s.runs--
	if s.runs > 0 {
		return nil
	}
	q, err := s.queue(ctx)
	if err != nil {
		return err
	}
	return q.Stop(ctx)
}

// Close stops the queue for every caller of StartJobs that has not
// stopped (running jobs finish, or have their contexts cancelled when ctx
// ends) and waits for the folder syncs scheduled so far and the removal of
// the workspaces runs set aside: what is left to do before the vault
// closes.
func (s *Service) Close(ctx context.Context) error {
	s.runMu.Lock()
	running := s.runs > 0
	s.runs = 0
	s.runMu.Unlock()
	var err error
	if running {
		var q *durable.Queue
		if q, err = s.queue(ctx); err == nil {
			err = q.Stop(ctx)
		}
	}
	s.Flush()
	s.background.Wait()
	return errors.Join(err, s.conv.Close())
}

// queue returns the service's queue, made from QueueConfig when no one
// made it before.
func (s *Service) queue(ctx context.Context) (*durable.Queue, error) {
	return s.Queue(ctx, func() (durable.Config, error) { return s.QueueConfig(ctx), nil })
}

// QueueConfig is the configuration of a queue that runs this service's
// ingest jobs, as many at once as main's policy says (agent.workers), with
// the service's crash points and logger; the caller may change what else
// it needs (how often an idle worker looks for jobs).
func (s *Service) QueueConfig(ctx context.Context) durable.Config {
	workers := river.NewWorkers()
	s.Register(workers)
	return durable.Config{Workers: workers, MaxWorkers: s.limits(ctx).Workers(), Crash: s.crash, Logger: s.log}
}

func (s *Service) point(name string) {
	if s.crash != nil {
		s.crash(name)
	}
}

// Args are an ingest job's arguments.
type Args struct {
	Source string `json:"source"` // the source's id
}

// Kind returns "ingest".
func (Args) Kind() string { return "ingest" }

// Added is what Add did with one file.
type Added struct {
	File   string  `json:"file"`
	Source *Source `json:"source"`
	// Queued is set for a source enqueued now; otherwise Note says why not.
	Queued bool   `json:"queued"`
	Note   string `json:"note,omitempty"`
	// Known is set when the content was on record before (Note says where
	// it went); Source is then that record, whatever its status: a queued
	// or running one's job has not finished yet.
	Known bool `json:"known,omitempty"`
}

// Add stores files as sources under raw/, commits them to main as system,
// records them and enqueues their jobs, in one transaction. A file that
// cannot be a source (empty, binary, too large, a hostile name, a format
// not supported) is recorded as a failed source with the reason; content
// ingested before is not ingested again. Missing files and folders are
// usage errors, and nothing is done.
//
// Whether a content is new is decided again inside the transaction that
// stores it: when another process stored the same content (or changed
// raw/ so that this change does not merge) after Add read main, nothing of
// this attempt lands, and Add plans again from the new head, where that
// content is known. However many processes ingest the same bytes at once,
// it is one source, one raw file and one job. After maxAddTries attempts
// that each lost such a race, the error is EUNAVAILABLE.
func (s *Service) Add(ctx context.Context, files []string, who cairn.Principal) ([]*Added, error) {
	if err := CheckFiles(files); err != nil {
		return nil, err
	}
	pol := s.limits(ctx)
	var in []*input
	for _, f := range files {
		data, id, size, err := readSource(f, pol.MaxSize())
		if err != nil {
			return nil, fmt.Errorf("ingest %s: %w", f, err)
		}
		in = append(in, &input{file: f, name: filepath.Base(f), data: data, id: id, size: size})
	}
	return s.addInputs(ctx, in, pol, who)
}

// CheckFiles reports what is wrong with local files given to ingest, with
// a hint: none given, a path that is missing, a folder, or not a regular
// file (EINVALID). A client that uploads files to a server checks them
// the same way first.
func CheckFiles(files []string) error {
	if len(files) == 0 {
		return cairn.Errorf(cairn.EINVALID, "no files given").WithHint("Try: cairn ingest paper.md notes.txt")
	}
	for _, f := range files {
		info, err := os.Stat(f)
		switch {
		case err != nil:
			return cairn.Errorf(cairn.EINVALID, "%s: no such file", f).WithHint("Check the path; cairn ingest takes files.")
		case info.IsDir():
			return cairn.Errorf(cairn.EINVALID, "%s is a folder; cairn ingest takes files", f).
				WithHint("To bring a whole folder of pages in, use cairn import.")
		case !info.Mode().IsRegular():
			return cairn.Errorf(cairn.EINVALID, "%s is not a regular file", f)
		}
	}
	return nil
}

// Data is content to ingest under the file name it is given, as a client
// uploads it rather than naming a local file.
type Data struct {
	Name string `json:"name"` // the file name, like notes-2026.md
	Data []byte `json:"data"`
}

// AddData is Add for content given as bytes: each item is checked as a
// file of that name would be (name rules, NFC, size, format, binary or
// empty content), refused ones are recorded as failed sources with the
// reason, and content on record is not ingested again, under whatever
// name it came before. Added.File is the name given. No items, or an
// item without a name, is EINVALID, and nothing is done.
func (s *Service) AddData(ctx context.Context, items []Data, who cairn.Principal) ([]*Added, error) {
	if len(items) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "no content given").WithHint("Give a source's name and its content.")
	}
	for i, it := range items {
		if it.Name == "" {
			return nil, cairn.Errorf(cairn.EINVALID, "content %d has no name", i+1).
				WithHint("Name it as its file would be named, like notes-2026.md.")
		}
	}
	pol := s.limits(ctx)
	var in []*input
	for _, it := range items {
		data, id, size := dataSource(it.Data, pol.MaxSize())
		in = append(in, &input{file: it.Name, name: it.Name, data: data, id: id, size: size})
	}
	return s.addInputs(ctx, in, pol, who)
}

// addInputs plans and submits read inputs until an attempt is not raced
// (see Add).
func (s *Service) addInputs(ctx context.Context, in []*input, pol *admit.Policy, who cairn.Principal) ([]*Added, error) {
	q, err := s.queue(ctx)
	if err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		out, stored, err := s.add(ctx, q, in, pol, who)
		if errors.Is(err, errRaced) {
			s.log.Info("ingest: another process stored sources meanwhile; planning again", "try", try)
			if try < maxAddTries {
				continue
			}
			return nil, cairn.Errorf(cairn.EUNAVAILABLE, "other processes kept storing sources while this ingest tried %d times; nothing was ingested", try).
				WithHint("Run cairn ingest again.")
		}
		if err != nil {
			return nil, err
		}
		s.point("ingest:enqueued")
		if stored {
			s.syncMain(ctx)
		}
		return out, nil
	}
}

// maxAddTries is how many times Add plans and submits before it gives up
// on other processes storing sources meanwhile.
const maxAddTries = 10

// errRaced rolls back an Add whose plan another process's sources made
// stale.
var errRaced = errors.New("another process stored sources meanwhile")

// input is a file given to Add, read, or content given to AddData.
type input struct {
	file, name string
	data       []byte // nil when over the size limit
	id         string
	size       int64
}

// add is one attempt of Add: it plans on main's head and submits, and
// returns errRaced, with nothing done, when the plan turns out stale in
// the transaction. stored reports whether raw/ changed.
func (s *Service) add(ctx context.Context, jobs *durable.Queue, in []*input, pol *admit.Policy, who cairn.Principal) (added []*Added, stored bool, err error) {
	head, err := s.v.Store.Head(ctx, admit.Branch)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return nil, false, err
	}
	headTree := store.EmptyTree
	if !head.IsZero() {
		c, err := s.v.Store.ReadCommit(ctx, head)
		if err != nil {
			return nil, false, err
		}
		headTree = c.Tree
	}
	type pending struct {
		added   *Added
		data    []byte
		refused *refusal
	}
	var all []*pending
	byID := map[string]*pending{}
	taken := map[string]bool{} // raw paths this call assigns, case folded
	var edits []store.FileChange
	for _, f := range in {
		p := &pending{added: &Added{File: f.file, Source: &Source{ID: f.id, Name: f.name, Size: f.size}}, data: f.data}
		all = append(all, p)
		if other, ok := byID[f.id]; ok {
			p.added.Source, p.added.Note = other.added.Source, "the same content as "+other.added.File
			continue
		}
		byID[f.id] = p
		old, err := s.getSource(ctx, nil, f.id)
		if err != nil {
			return nil, false, err
		}
		if known(old) {
			p.added.Source, p.added.Note, p.added.Known = old, knownNote(old), true
			continue
		}
		name, r := checkName(f.name)
		if r != nil {
			p.refused = r
			continue
		}
		p.added.Source.Name = name
		if r := checkContent(name, f.data, f.size, pol.MaxSize()); r != nil {
			p.refused = r
			continue
		}
		// Never overwrite: a different file whose name is taken gets its
		// hash in its name.
		rawPath := "raw/" + name
		blob := store.BlobHash(f.data)
		there := false // the raw file is on main already
		e, err := s.v.Store.GetFold(ctx, headTree, rawPath)
		switch {
		case err == nil && e.Blob == blob && e.Path == rawPath:
			there = true
		case err == nil || taken[cairn.FoldPath(rawPath)]:
			ext := path.Ext(name)
			rawPath = "raw/" + strings.TrimSuffix(name, ext) + "." + f.id[:8] + ext
			if e, err := s.v.Store.GetFold(ctx, headTree, rawPath); err == nil && e.Blob == blob {
				there = true
			}
		}
		taken[cairn.FoldPath(rawPath)] = true
		p.added.Source.Path = rawPath
		if !there {
			edits = append(edits, store.FileChange{Path: rawPath, Data: f.data})
		}
	}
	now := s.now()
	rows := func(ctx context.Context, tx *store.Tx) error {
		for _, p := range all {
			src := p.added.Source
			if p.added.Note != "" {
				continue
			}
			// The plan read the source outside this transaction: it is
			// new only if it still is.
			cur, err := s.getSource(ctx, tx, src.ID)
			if err != nil {
				return err
			}
			if known(cur) {
				return errRaced
			}
			if p.refused != nil {
				src.Status, src.Error, src.Hint = Failed, p.refused.msg, p.refused.hint
				if err := s.putSource(ctx, tx, src, Step{Time: now, Status: Failed, Principal: who, Detail: src.Error}); err != nil {
					return err
				}
				if err := s.v.Admit.Event(ctx, tx, now, "source.failed", src.ID, map[string]any{"name": src.Name, "error": src.Error, "hint": src.Hint}); err != nil {
					return err
				}
				continue
			}
			// The job goes in first, so that the source is recorded with it.
			job, err := jobs.InsertTx(ctx, tx.Backend(), Args{Source: src.ID}, &river.InsertOpts{MaxAttempts: pol.Attempts()})
			if err != nil {
				return err
			}
			src.Status, src.Job = Queued, job
			if err := s.putSource(ctx, tx, src, Step{Time: now, Status: Queued, Principal: who, Detail: fmt.Sprintf("stored as %s; job %d", src.Path, job)}); err != nil {
				return err
			}
			if err := s.v.Admit.Event(ctx, tx, now, "source.queued", src.ID, map[string]any{"name": src.Name, "path": src.Path, "job": job}); err != nil {
				return err
			}
			p.added.Queued = true
		}
		return nil
	}
	if len(edits) > 0 {
		b := s.v.Store.NewBatch()
		tree, err := b.Edit(ctx, headTree, edits)
		if err != nil {
			return nil, false, err
		}
		var names []string
		for _, e := range edits {
			names = append(names, path.Base(e.Path))
		}
		slices.Sort(names)
		_, err = s.v.Admit.Submit(ctx, admit.Request{
			Route: "source", Base: head, Tree: tree, Batch: b, Principal: cairn.PrincipalSystem,
			Message: "raw: add " + strings.Join(names, ", "),
			Within: func(ctx context.Context, tx *store.Tx, out *admit.Outcome) error {
				if !out.Admitted() {
					// Another change to raw/ landed meanwhile and clashes
					// (the same name, other bytes): nothing is recorded,
					// and the next plan sees that change.
					return errRaced
				}
				return rows(ctx, tx)
			},
		})
		if errors.Is(err, admit.ErrEmpty) {
			// Every file is on main already: another process stored
			// the same files meanwhile.
			return nil, false, errRaced
		}
		if err != nil {
			return nil, false, err
		}
	} else if err := s.v.Store.Update(ctx, func(tx *store.Tx) error { return rows(ctx, tx) }); err != nil {
		return nil, false, err
	}
	out := make([]*Added, len(all))
	for i, p := range all {
		out[i] = p.added
	}
	return out, len(edits) > 0, nil
}

// known reports whether a source's content was ingested before: every
// source on record, but one refused at the door (its file was never
// stored), which may be ingested again once fixed.
func known(src *Source) bool { return src != nil && !(src.Status == Failed && src.Path == "") }

// knownNote says where content ingested before went.
func knownNote(old *Source) string {
	switch old.Status {
	case Rejected:
		return fmt.Sprintf("rejected before; it stays rejected until cairn sources retry %s", old.ID[:12])
	case Failed:
		return fmt.Sprintf("failed before (%s); cairn sources retry %s tries again", old.Error, old.ID[:12])
	}
	return fmt.Sprintf("ingested before as %s (%s)", old.Path, old.Status)
}

// putSource records a new source inside tx, or overwrites the record of
// one refused at the door, with step as its next history entry.
func (s *Service) putSource(ctx context.Context, tx *store.Tx, src *Source, step Step) error {
	if err := s.st.PutSource(ctx, tx.Backend(), src, step); err != nil {
		return fmt.Errorf("record source %s: %w", src.Name, err)
	}
	return nil
}

// readSource reads a file up to max bytes and hashes all of it. A file
// over max is hashed but not kept.
func readSource(file string, max int64) (data []byte, id string, size int64, err error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	limited := &capWriter{max: max}
	size, err = io.Copy(io.MultiWriter(h, limited), f)
	if err != nil {
		return nil, "", 0, err
	}
	return limited.data, hex.EncodeToString(h.Sum(nil)), size, nil
}

// dataSource hashes content given as bytes and keeps it up to max bytes,
// as readSource does a file's.
func dataSource(b []byte, max int64) (data []byte, id string, size int64) {
	sum := sha256.Sum256(b)
	if int64(len(b)) <= max {
		data = b
	}
	return data, hex.EncodeToString(sum[:]), int64(len(b))
}

// capWriter keeps what is written to it up to max bytes, then nothing.
type capWriter struct {
	max  int64
	data []byte
	over bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if !w.over && int64(len(w.data)+len(p)) <= w.max {
		w.data = append(w.data, p...)
	} else {
		w.over, w.data = true, nil
	}
	return len(p), nil
}

// syncMain brings main's folder to main's head, telling why when it
// cannot (it is never fatal: the next command syncs).
func (s *Service) syncMain(ctx context.Context) {
	s.folder.Lock()
	defer s.folder.Unlock()
	if _, err := s.v.SyncMain(ctx); err != nil {
		s.log.Warn("update the vault's folder", "err", err)
	}
}

// syncSoon schedules a sync of main's folder a moment from now, unless one
// is scheduled already: admissions close together (a batch of sources)
// share one sync, and index.md and log.md are written once, not once each.
func (s *Service) syncSoon(ctx context.Context) {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if s.syncQueue {
		return
	}
	s.syncQueue = true
	s.syncs.Add(1)
	go func() {
		defer s.syncs.Done()
		time.Sleep(50 * time.Millisecond)
		s.syncMu.Lock()
		s.syncQueue = false
		s.syncMu.Unlock()
		s.syncMain(context.WithoutCancel(ctx))
	}()
}

// Flush waits for the folder syncs scheduled so far.
func (s *Service) Flush() { s.syncs.Wait() }

// Decided keeps a source's status in step with its proposal, at the time
// the service's clock gives: register it with the vault's admission
// pipeline (Pipeline.OnDecided), once; app.Open does.
func (s *Service) Decided(ctx context.Context, tx *store.Tx, p *cairn.Proposal) error {
	if p.Source == "" || p.Route != "ingest" {
		return nil
	}
	status := map[string]string{
		cairn.ProposalAdmitted: Merged, cairn.ProposalAccepted: Merged,
		cairn.ProposalHeld: Held, cairn.ProposalRejected: Rejected,
	}[p.Status]
	if status == "" {
		return nil
	}
	who := p.DecidedBy
	if who == "" {
		who = cairn.PrincipalSystem
	}
	detail := fmt.Sprintf("proposal %d %s", p.ID, p.Status)
	if p.Reason != "" {
		detail += ": " + p.Reason
	}
	now := s.now()
	err := s.setStatus(ctx, tx, p.Source, StatusChange{Step: Step{Time: now, Status: status, Principal: who, Detail: detail}, Proposal: p.ID})
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return nil // no source on record to follow the proposal
	}
	if err != nil {
		return err
	}
	data := map[string]any{"proposal": p.ID}
	if p.Job != 0 {
		data["job"] = p.Job
	}
	return s.v.Admit.Event(ctx, tx, now, "ingest."+status, p.Source, data)
}

// Get returns a source, with its history, by id prefix or name.
func (s *Service) Get(ctx context.Context, ref string) (*Source, error) {
	src, err := s.resolveSource(ctx, ref)
	if err != nil {
		return nil, err
	}
	if src.History, err = s.st.History(ctx, src.ID); err != nil {
		return nil, fmt.Errorf("read source history: %w", err)
	}
	return src, nil
}

// List returns the sources, newest first; status filters ("" for all),
// and off and limit keep limit of them from the off-th on (limit 0: all
// from there). It returns how many there are of that status too.
func (s *Service) List(ctx context.Context, status string, off, limit int) ([]*Source, int, error) {
	if status != "" && !slices.Contains([]string{Queued, Running, Merged, Held, Rejected, Failed}, status) {
		return nil, 0, cairn.Errorf(cairn.EINVALID, "unknown status %q", status).
			WithHint("Use queued, running, merged, held, rejected or failed.")
	}
	if off < 0 || limit < 0 {
		return nil, 0, cairn.Errorf(cairn.EINVALID, "a part of the sources starts at offset 0 or more and holds 0 or more, not offset %d, limit %d", off, limit).
			WithHint("Leave both out for them all; pass the next part's cursor as it came.")
	}
	n, err := s.st.CountSources(ctx, status)
	if err != nil {
		return nil, 0, fmt.Errorf("list sources: %w", err)
	}
	out, err := s.st.Sources(ctx, status, off, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("list sources: %w", err)
	}
	return out, n, nil
}

// Retry queues a failed or rejected source again: its job runs again (a
// new job when River has forgotten the old one). While that job is still
// running (cancelled, or its source failed, and not ended yet) the retry
// is ECONFLICT and changes nothing: the source waits neither for a job
// that ends without running it nor beside a second job.
func (s *Service) Retry(ctx context.Context, ref string, who cairn.Principal) (*Source, error) {
	src, err := s.resolveSource(ctx, ref)
	if err != nil {
		return nil, err
	}
	return s.retry(ctx, src, who)
}

// RetryJob is Retry for the source a job ingests.
func (s *Service) RetryJob(ctx context.Context, job int64, who cairn.Principal) (*Source, error) {
	src, err := s.sourceOfJob(ctx, job)
	if err != nil {
		return nil, err
	}
	return s.retry(ctx, src, who)
}

func (s *Service) retry(ctx context.Context, src *Source, who cairn.Principal) (*Source, error) {
	switch {
	case src.Path == "":
		return nil, cairn.Errorf(cairn.EINVALID, "%s was refused at the door (%s); retrying cannot change that", src.Name, src.Error).
			WithHint(cmp.Or(src.Hint, "Fix the file and ingest it again."))
	case src.Status == Queued || src.Status == Running:
		if _, stuck := s.Stuck(ctx, src); !stuck {
			return nil, cairn.Errorf(cairn.EINVALID, "%s is %s and its job %d will run it; only failed or rejected sources, or sources whose job is gone, are retried",
				src.Name, src.Status, src.Job).WithHint("Try: cairn worker")
		}
	case src.Status != Failed && src.Status != Rejected:
		return nil, cairn.Errorf(cairn.EINVALID, "%s is %s; only failed or rejected sources are retried", src.Name, src.Status).
			WithHint("Try: cairn sources")
	}
	q, err := s.queue(ctx)
	if err != nil {
		return nil, err
	}
	pol := s.limits(ctx)
	seen := *src
	err = s.v.Store.Update(ctx, func(tx *store.Tx) error {
		// Decided on what was read before the transaction: another retry,
		// a cancel or a decision that landed meanwhile wins, and this one
		// changes nothing (two retries never make two jobs).
		now, err := s.getSource(ctx, tx, src.ID)
		if err != nil {
			return err
		}
		if now == nil || now.Status != seen.Status || now.Job != seen.Job || now.Attempt != seen.Attempt {
			return cairn.Errorf(cairn.ECONFLICT, "%s changed while it was being retried (it is %s now)", src.Name, cmp.Or(now, &Source{Status: "gone"}).Status).
				WithHint("Try: cairn sources show " + src.ID[:12])
		}
		job := src.Job
		if job != 0 {
			j, err := q.RetryTx(ctx, tx.Backend(), job)
			switch {
			case cairn.ErrorCode(err) == cairn.ENOTFOUND:
				job = 0
			case err != nil:
				return err
			case j.State == durable.StateRunning:
				// River leaves a running job as it is: one cancelled, or
				// whose source failed, that has not ended yet. Queued under
				// it, the source would wait for a job that ends without
				// running it; under a new job, two agents would run it.
				return cairn.Errorf(cairn.ECONFLICT, "job %d is still stopping; try again in a moment", job).
					WithHint("Once cairn jobs shows it ended (its worker stops the agent within seconds), try again: cairn sources retry " + src.ID[:12])
			}
		}
		if job == 0 {
			var err error
			if job, err = q.InsertTx(ctx, tx.Backend(), Args{Source: src.ID}, &river.InsertOpts{MaxAttempts: pol.Attempts()}); err != nil {
				return err
			}
		}
		src.Job = job
		if err := s.setStatus(ctx, tx, src.ID, StatusChange{
			Step: Step{Time: s.now(), Status: Queued, Principal: who, Detail: fmt.Sprintf("retried (was %s); job %d", src.Status, job)},
			Job:  job,
		}); err != nil {
			return err
		}
		return s.v.Admit.Event(ctx, tx, s.now(), "source.queued", src.ID, map[string]any{"name": src.Name, "job": job, "retry": true})
	})
	if err != nil {
		return nil, err
	}
	src.Status, src.Error, src.Hint = Queued, "", ""
	return src, nil
}

// CancelJob cancels a job: a queued one never runs, a running one's agent
// is stopped; its source is marked failed.
func (s *Service) CancelJob(ctx context.Context, job int64, who cairn.Principal) (*durable.Job, error) {
	q, err := s.queue(ctx)
	if err != nil {
		return nil, err
	}
	var j *durable.Job
	err = s.v.Store.Update(ctx, func(tx *store.Tx) error {
		var err error
		if j, err = q.CancelTx(ctx, tx.Backend(), job); err != nil {
			return err
		}
		// The source is read in the transaction that cancels its job: a
		// decision that landed first keeps its status.
		src, err := s.st.SourceOfJobTx(ctx, tx.Backend(), job)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND || err == nil && src.Status != Queued && src.Status != Running {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the source of job %d: %w", job, err)
		}
		msg, hint := "cancelled by "+string(who), "cairn sources retry "+src.ID[:12]+" tries again"
		if err := s.setStatus(ctx, tx, src.ID, StatusChange{
			Step:  Step{Time: s.now(), Status: Failed, Principal: who, Detail: msg},
			Error: msg, Hint: hint,
		}); err != nil {
			return err
		}
		return s.v.Admit.Event(ctx, tx, s.now(), "ingest.failed", src.ID, map[string]any{"job": job, "error": msg, "hint": hint})
	})
	if err != nil {
		return nil, err
	}
	return j, nil
}

// JobSource returns the source an ingest job integrates, named by the
// job's arguments; ENOTFOUND for a job of another kind, or whose source is
// not recorded.
func (s *Service) JobSource(ctx context.Context, j *durable.Job) (*Source, error) {
	var args Args
	if j.Kind != (Args{}).Kind() || json.Unmarshal(j.Args, &args) != nil || args.Source == "" {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "job %d ingests no source", j.ID)
	}
	src, err := s.getSource(ctx, nil, args.Source)
	if err != nil {
		return nil, err
	}
	if src == nil {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "job %d ingests source %.12s, which is not recorded", j.ID, args.Source)
	}
	return src, nil
}

func (s *Service) sourceOfJob(ctx context.Context, job int64) (*Source, error) {
	src, err := s.st.SourceOfJob(ctx, job)
	if err != nil {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "job %d ingests no source", job).WithHint("Try: cairn jobs")
	}
	return src, nil
}

// policy returns the policy of main's head: the defaults when main has no
// commit or no cairn.yaml. A cairn.yaml that does not parse (one a newer
// cairn wrote, or that reached main before this one checked it) gives the
// defaults and the error: callers that only need limits go on with the
// defaults and log it, and the worker fails the job rather than run an
// agent the vault did not name.
func (s *Service) policy(ctx context.Context) (*admit.Policy, error) {
	head, err := s.v.Store.Head(ctx, admit.Branch)
	if err != nil {
		return &admit.Policy{}, nil
	}
	c, err := s.v.Store.ReadCommit(ctx, head)
	if err != nil {
		return &admit.Policy{}, nil
	}
	pol, err := admit.PolicyAt(ctx, s.v.Store, c.Tree)
	if err != nil {
		return &admit.Policy{}, fmt.Errorf("%s on main: %w", admit.PolicyFile, err)
	}
	return pol, nil
}

// limits is the policy for what needs only its limits: the defaults when
// cairn.yaml does not parse, with a warning in the log.
func (s *Service) limits(ctx context.Context) *admit.Policy {
	pol, err := s.policy(ctx)
	if err != nil {
		s.log.Warn("ingest: using the default settings", "err", err)
	}
	return pol
}

var errStale = errors.New("the source is not this attempt's to decide")

// Stuck reports whether a queued or running source's job can no longer
// run it (it is gone, or finished without deciding the source), and why.
// Such a source waits for nothing: cairn sources retry queues it again.
func (s *Service) Stuck(ctx context.Context, src *Source) (why string, stuck bool) {
	if src.Status != Queued && src.Status != Running {
		return "", false
	}
	q, err := s.queue(ctx)
	if err != nil {
		return "", false // cannot tell now
	}
	j, err := q.Get(ctx, src.Job)
	switch {
	case cairn.ErrorCode(err) == cairn.ENOTFOUND:
		return fmt.Sprintf("its job %d is gone", src.Job), true
	case err != nil:
		return "", false // cannot tell now
	case !j.Finalized.IsZero():
		return fmt.Sprintf("its job %d is %s", j.ID, j.State), true
	}
	return "", false
}

// Check reports sources whose records disagree: a status that is not its
// proposal's, a queued or running source whose job is finished or gone.
func (s *Service) Check(ctx context.Context) ([]string, error) {
	srcs, err := s.st.Sources(ctx, "", 0, 0)
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	var out []string
	for _, src := range srcs {
		if src.Proposal != 0 {
			p, err := s.v.Admit.Get(ctx, src.Proposal)
			if err != nil {
				out = append(out, fmt.Sprintf("source %s names proposal %d: %v", src.Name, src.Proposal, err))
				continue
			}
			want := map[string]string{cairn.ProposalAdmitted: Merged, cairn.ProposalAccepted: Merged,
				cairn.ProposalHeld: Held, cairn.ProposalRejected: Rejected}[p.Status]
			if (src.Status == Merged || src.Status == Held || src.Status == Rejected) && src.Status != want {
				out = append(out, fmt.Sprintf("source %s is %s but its proposal %d is %s", src.Name, src.Status, p.ID, p.Status))
			}
		} else if src.Status == Merged || src.Status == Held {
			out = append(out, fmt.Sprintf("source %s is %s without a proposal", src.Name, src.Status))
		}
		if why, stuck := s.Stuck(ctx, src); stuck {
			out = append(out, fmt.Sprintf("source %s is %s but %s (cairn sources retry %s)", src.Name, src.Status, why, src.ID[:12]))
		}
	}
	return out, nil
}
