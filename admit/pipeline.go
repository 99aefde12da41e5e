package admit

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"cairn"
	"cairn/eva"
	"cairn/index"
	"cairn/lint"
	"cairn/store"
)

// Branch is the branch admission guards.
const Branch = index.Branch

// Options configure a Pipeline. The zero value gives the defaults.
type Options struct {
	// Logger receives the pipeline's logs. Default: discard.
	Logger *slog.Logger
	// Now returns the current time. Default time.Now.
	Now func() time.Time
	// Crash, when set, is called at named points (crash tests).
	Crash func(point string)
}

// Pipeline is a vault's admission pipeline: every change to main is a
// proposal that goes through Submit, whatever its route.
type Pipeline struct {
	s       *store.Store
	ix      *index.Index
	st      Storage
	decided []DecidedFunc
	log     *slog.Logger
	now     func() time.Time
	crash   func(string)
	// turn makes the admissions of one pipeline take turns from judgement
	// to record: one judged while another commits would see main move and
	// throw its lint preview away. Other processes' admissions still race,
	// and a judgement that loses is made again. A channel of one, so that
	// waiting for the turn ends with ctx.
	turn chan struct{}
	// parsed are the policies of recent cairn.yaml contents, parsed and
	// their CEL compiled once.
	parsedMu sync.Mutex
	parsed   map[cairn.Hash]*Policy
}

// DecidedFunc is called inside the transaction that gives a proposal a
// status (admitted, held, rejected, accepted), whatever decided it: the
// gates, a review, a recheck. Subsystems keep their rows in step with it
// (an ingest's source status).
type DecidedFunc func(ctx context.Context, tx *store.Tx, p *cairn.Proposal) error

// New returns the pipeline of the vault whose store and index are s and
// ix, keeping its records in st. It registers a hook that refuses any move of main it
// did not make, so no route can skip it.
func New(s *store.Store, ix *index.Index, st Storage, opts *Options) *Pipeline {
	if opts == nil {
		opts = &Options{}
	}
	p := &Pipeline{
		s:     s,
		ix:    ix,
		st:    st,
		log:   cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))),
		now:   opts.Now,
		crash: opts.Crash,
		turn:  make(chan struct{}, 1),
	}
	if p.now == nil {
		p.now = time.Now
	}
	s.AddHook(p.guard)
	return p
}

// OnDecided registers f to run whenever a proposal gets a status. Call it
// before the pipeline is shared.
func (p *Pipeline) OnDecided(f DecidedFunc) { p.decided = append(p.decided, f) }

// runDecided calls the request's own function, then the registered ones.
func (p *Pipeline) runDecided(ctx context.Context, tx *store.Tx, req *Request, out *Outcome) error {
	if req != nil && req.Within != nil {
		if err := req.Within(ctx, tx, out); err != nil {
			return err
		}
	}
	for _, f := range p.decided {
		if err := f(ctx, tx, out.Proposal); err != nil {
			return err
		}
	}
	return nil
}

// Store returns the store the pipeline admits into.
func (p *Pipeline) Store() *store.Store { return p.s }

// point marks a named crash point, also under the route's name
// ("admit:judged" and "admit:judged:ingest").
func (p *Pipeline) point(name, route string) {
	if p.crash != nil {
		p.crash(name)
		p.crash(name + ":" + route)
	}
}

// admittingKey marks, in a store transaction, the one ref update of main
// the pipeline is making.
type admittingKey struct{}

// guard refuses every move of main but the pipeline's own.
func (p *Pipeline) guard(ctx context.Context, tx *store.Tx, u cairn.RefUpdate) error {
	if u.Name != "heads/"+Branch {
		return nil
	}
	if h, _ := tx.Value(admittingKey{}).(bool); h && !u.New.IsZero() {
		return nil
	}
	return cairn.Errorf(cairn.EINTERNAL, "main can only move through admission; a move to %s by %s was refused", u.New.Short(), u.Principal).
		WithHint("This is a bug in cairn; please report it.")
}

// Request is a change submitted for admission into main.
type Request struct {
	// Key names the submission uniquely (a job attempt, a review decision);
	// submitting a key a second time is refused (ECONFLICT), so a replay
	// can never admit twice. Default: random.
	Key string
	// Route is how the change came: ingest, commit, merge, import, revert,
	// settings, review (required).
	Route string
	// Base is the commit the change was made on (zero: main was empty).
	Base cairn.Hash
	// BaseTree is the tree the change was made on. Default: Base's tree.
	BaseTree cairn.Hash
	// Tree is the proposed tree (required).
	Tree cairn.Hash
	// Batch holds Tree's new objects. Default: Tree is stored already.
	Batch *store.Batch
	// Commit, when set, is a commit that holds Tree already (a proposal
	// branch's head); the commit that admits the change has it as parent.
	Commit cairn.Hash
	// Parents are further parents of the commit that admits the change
	// (the head of a merged branch).
	Parents []cairn.Hash
	// Principal made the change (required).
	Principal cairn.Principal
	// Origin picks the column of the verdict table. Default:
	// OriginOf(Principal).
	Origin Origin
	// Message says why (required).
	Message string
	// Meta is added to the commit's metadata.
	Meta map[string]string
	// Summary is the agent's account of its change.
	Summary string
	// Log, when set, is appended to log.md by the commit that admits it.
	Log *cairn.LogEntry
	// Outside are writes the agent made outside its workspace.
	Outside []string
	// Skipped are files the workspace held that cannot be vault files.
	Skipped []Skipped
	// Source and Job name what an ingest integrates and the job that ran.
	Source string
	Job    int64
	// Proposal, when set, decides a held proposal again (a review) instead
	// of recording a new one.
	Proposal int64
	// Decider makes the decision (a reviewer). Default: the principal for
	// people's changes, system for agents' changes the gates admit.
	Decider cairn.Principal
	// Force admits whatever the gates say, except a conflict: a person's
	// review accepting a held proposal.
	Force bool
	// AllowEmpty admits a change that changes nothing (merging a branch
	// main already has).
	AllowEmpty bool
	// Propose keeps the change for a person's review whatever the gates
	// say (a finding of gate GateReview, rule "proposed", holds it): a
	// client that proposes rather than commits. The gates still run and
	// their findings are kept; a rejecting finding still rejects.
	Propose bool
	// Within runs inside the transaction that records the outcome, before
	// the functions registered with OnDecided, for the caller's own rows
	// (a job's completion). An error rolls everything back.
	Within func(ctx context.Context, tx *store.Tx, out *Outcome) error
	// OnHead, when set, runs in each judgement with main's head as it is
	// judged against, before any gate: an error ends the submission and
	// nothing is recorded. A compare-and-swap refuses a head that moved
	// from its base here, before the work of judging it.
	OnHead func(ctx context.Context, head cairn.Hash) error
}

// Outcome is what admission decided.
type Outcome struct {
	// Proposal is the recorded proposal; nil when nothing was recorded (a
	// person's change that conflicts with main).
	Proposal *cairn.Proposal `json:"proposal,omitempty"`
	Verdict  cairn.Verdict   `json:"verdict"`
	// Findings are every gate's findings, with their verdicts.
	Findings []cairn.Finding `json:"findings"`
	// Lint are the new lint findings of severity warning or error.
	Lint []lint.Finding `json:"lint,omitempty"`
	// Commit is the commit that admitted the change.
	Commit *cairn.Commit `json:"commit,omitempty"`
	// Conflicts, when main moved and the change does not merge onto it.
	Conflicts []cairn.Conflict `json:"conflicts,omitempty"`
	// Rebased is set when main had moved and the change was merged onto
	// its head (the gates judged the merged result).
	Rebased bool `json:"rebased,omitempty"`
	// Origin is the column of the verdict table that applied.
	Origin Origin `json:"origin"`
}

// Admitted reports whether the change landed.
func (o *Outcome) Admitted() bool { return o.Commit != nil }

// ErrEmpty is the cause of the error Submit returns for a change that
// changes nothing.
var ErrEmpty = &cairn.Error{Code: cairn.EINVALID, Message: "the change is empty"}

// errMoved ends the write transaction of a change judged against a head of
// main that is no longer main's head: the change is judged again.
var errMoved = errors.New("main moved since the change was judged")

// errNotAdmitted rolls back the write transaction of a change the gates did
// not admit, taking the lint gate's index update with it.
var errNotAdmitted = errors.New("the change was not admitted")

// errUnmerged ends a write transaction of Submit whose change must be
// settled as a person's unmerged change, outside it.
var errUnmerged = errors.New("the change must be settled unmerged")

// maxJudgements is how many times Submit judges a change whose target main
// keeps moving before it gives up (EUNAVAILABLE); from the judgement
// numbered lockedAfter on, it judges inside the write transaction, which
// no other admission, in this process or another, can outrun.
const (
	maxJudgements = 8
	lockedAfter   = 3
)

func (p *Pipeline) checkRequest(req *Request) error {
	if req.Route == "" || req.Message == "" || req.Tree.IsZero() {
		return cairn.Errorf(cairn.EINVALID, "admission request: route, message and tree are required")
	}
	if err := req.Principal.Validate(); err != nil {
		return err
	}
	if req.Origin == "" {
		req.Origin = OriginOf(req.Principal)
	}
	if req.Key == "" {
		var b [8]byte
		rand.Read(b[:])
		req.Key = req.Route + ":" + hex.EncodeToString(b[:])
	}
	if req.Batch == nil {
		req.Batch = p.s.NewBatch()
	}
	return nil
}

// Submit runs the gates on a change to main and records the outcome: an
// admitted change is committed (merged three-way onto main's head if main
// moved since its base, its gates judging the merged result), with the
// index update, the log entry, the proposal, audit and event rows and the
// caller's rows, in one transaction; a held or rejected change is kept as
// the branch proposals/<id> with its findings, in one transaction.
//
// The gates, the merge and the lint gate run on read snapshots of main and
// of its index, without the write lock (the lint gate's index update runs
// on an in-memory overlay: index.Preview). The write transaction then
// checks that main's head is still the one judged (if not, the change is
// judged again on the new head) and writes the outcome: a held or rejected
// change only its records; an admitted one its commit and the index rows
// the preview wrote in memory (index.ApplyPreview), or, for a change too
// large to preview or an index rebuilt meanwhile, the index updated inside
// the transaction and the change judged there again.
//
// A change that main outran lockedAfter times is judged and decided in
// one write transaction (submitLocked): several processes committing to
// main at once cannot starve it.
//
// Errors: a change that changes nothing wraps ErrEmpty; a key submitted
// before, or a proposal that is not held, is ECONFLICT; a cairn.yaml the
// change makes invalid is EINVALID; main moving on every one of
// maxJudgements judgements (only the recording of an outcome that is not
// admitted can still be outrun) is EUNAVAILABLE. A person's change that
// conflicts with main is returned with its conflicts and nothing recorded.
func (p *Pipeline) Submit(ctx context.Context, req Request) (*Outcome, error) {
	if err := p.checkRequest(&req); err != nil {
		return nil, err
	}
	select {
	case p.turn <- struct{}{}:
		defer func() { <-p.turn }()
	case <-ctx.Done():
		return nil, fmt.Errorf("admission: wait for the admissions before it: %w", ctx.Err())
	}
	for i := range maxJudgements {
		// The first judgement previews the lint gate without the lock.
		// When main moved meanwhile, the next ones leave lint to the
		// write transaction: a preview that several admissions race to
		// invalidate is work thrown away, and one inside the transaction
		// cannot be outrun.
		if i > 0 {
			p.log.Debug("admission: main moved while the change was judged; judging it again", "route", req.Route, "judgement", i+1)
		}
		var out *Outcome
		var err error
		if i >= lockedAfter {
			out, err = p.submitLocked(ctx, &req)
		} else {
			out, err = p.submitOnce(ctx, &req, i == 0)
		}
		if errors.Is(err, errMoved) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if out.Admitted() {
			p.point("admit:committed", req.Route)
		} else {
			p.point("admit:recorded", req.Route)
		}
		return out, nil
	}
	return nil, cairn.Errorf(cairn.EUNAVAILABLE, "main moved %d times while the change was judged; nothing was recorded", maxJudgements).
		WithHint("Another process is committing to main; try again when it is done.")
}

// submitOnce judges a change once on read snapshots of main and its index,
// without the write lock (previewing the lint gate when preview is set),
// and records the outcome; errMoved when main moved meanwhile.
func (p *Pipeline) submitOnce(ctx context.Context, req *Request, preview bool) (*Outcome, error) {
	j, err := p.judge(ctx, req, preview)
	if err != nil {
		return nil, err
	}
	// Judged without the lock: main may move from here on.
	p.point("admit:gated", req.Route)
	if j.out != nil && (req.Force || req.Origin == OriginPerson && req.Proposal == 0) {
		// A person settles conflicts in their folder, and a review
		// that cannot merge stays held with the error.
		return p.unmerged(ctx, req, j)
	}
	var out *Outcome
	if j.lint != nil && !admissible(req, j.lint) {
		// Judged whole on the snapshot and not admitted: the write
		// transaction only records it.
		out, err = j.lint, p.recordIn(ctx, req, j, j.lint)
	} else {
		err = p.s.Update(ctx, func(tx *store.Tx) error {
			var err error
			out, err = p.decide(ctx, tx, req, j)
			return err
		})
		if errors.Is(err, errNotAdmitted) {
			// The lint gate's index update went with the transaction,
			// which costs less than undoing it to a savepoint; the
			// outcome is recorded in a short transaction of its own.
			err = p.recordIn(ctx, req, j, out)
		}
	}
	return out, err
}

// submitLocked judges a change and records the outcome in one write
// transaction, which no other admission can outrun: the last resort of a
// change that main outran lockedAfter times. A person's change that must be
// settled unmerged, and an outcome that is not admitted, are recorded
// after it, as submitOnce records them.
func (p *Pipeline) submitLocked(ctx context.Context, req *Request) (*Outcome, error) {
	var j *judgement
	var out *Outcome
	err := p.s.Update(ctx, func(tx *store.Tx) error {
		var err error
		if j, err = p.judge(ctx, req, false); err != nil {
			return err
		}
		// No "admit:gated" point: main cannot move from here on.
		if j.out != nil && (req.Force || req.Origin == OriginPerson && req.Proposal == 0) {
			return errUnmerged
		}
		out, err = p.decide(ctx, tx, req, j)
		return err
	})
	switch {
	case errors.Is(err, errUnmerged):
		return p.unmerged(ctx, req, j)
	case errors.Is(err, errNotAdmitted):
		err = p.recordIn(ctx, req, j, out)
	}
	return out, err
}

// recordIn records the outcome of a change that was not admitted, in a
// write transaction of its own: main must still be at the judged head
// (errMoved otherwise).
func (p *Pipeline) recordIn(ctx context.Context, req *Request, j *judgement, out *Outcome) error {
	return p.s.Update(ctx, func(tx *store.Tx) error {
		if err := j.current(ctx, tx); err != nil {
			return err
		}
		if err := p.submittable(ctx, tx, req); err != nil {
			return err
		}
		return p.record(ctx, tx, req, out)
	})
}

// unmerged returns the outcome of a change that does not merge onto main
// and that is not recorded as a proposal: a person's change, returned to be
// settled, or a review's decision, whose proposal keeps the error. It
// returns errMoved when main moved since the judgement.
func (p *Pipeline) unmerged(ctx context.Context, req *Request, j *judgement) (*Outcome, error) {
	if req.Proposal == 0 {
		return j.out, nil
	}
	msg := fmt.Sprintf("main changed the same places since the proposal was made (%d conflicts); nothing was merged", len(j.out.Conflicts))
	err := p.s.Update(ctx, func(tx *store.Tx) error {
		if err := j.current(ctx, tx); err != nil {
			return err
		}
		if err := p.st.SetProposalError(ctx, tx.Backend(), req.Proposal, msg); err != nil {
			return fmt.Errorf("proposal %d: record the error: %w", req.Proposal, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return j.out, cairn.Errorf(cairn.ECONFLICT, "proposal %d: %s", req.Proposal, msg).
		WithHint(fmt.Sprintf("Fix it in a working tree (cairn worktree add DIR proposals/%d), commit there, remove the tree (cairn worktree remove DIR), then cairn review recheck %d", req.Proposal, req.Proposal))
}

// judgement is a change judged on a read snapshot of main, without the
// write lock: every gate but lint, which reads the index.
type judgement struct {
	head     cairn.Hash // main's head the change was judged against (zero: no main)
	headTree cairn.Hash
	pol      *Policy
	rebased  bool
	// final is the tree main moves to if the change is admitted: the
	// change merged onto head, with the log entry.
	final cairn.Hash
	// findings are the path gates' findings, their verdicts not yet set.
	findings []cairn.Finding
	// out, when set, is the judged outcome of a change that does not
	// merge onto head (it has conflicts); lint does not run on it.
	out *Outcome
	// preview is the lint gate's index update judged on a snapshot of the
	// index at head, and lint the outcome it gives; nil for a change the
	// index judges only in a write transaction (index.ErrBulk).
	preview *index.Preview
	lint    *Outcome
	// policies is what the vault's policies read of the change; nil when
	// it has none.
	policies *policyInput
}

// current returns errMoved unless main's head, read inside tx, is still
// the one the change was judged against.
func (j *judgement) current(ctx context.Context, tx *store.Tx) error {
	head, err := tx.Head(ctx, Branch)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return fmt.Errorf("admission: read main: %w", err)
	}
	if head != j.head {
		return errMoved
	}
	return nil
}

// submittable refuses a request that cannot be decided: a proposal that is
// not held, or a key submitted before (ECONFLICT). It reads what is
// committed when tx is nil (judging), else inside tx (before recording).
func (p *Pipeline) submittable(ctx context.Context, tx *store.Tx, req *Request) error {
	if req.Proposal != 0 {
		var prop *cairn.Proposal
		var err error
		if tx == nil {
			prop, err = p.getProposal(ctx, req.Proposal)
		} else {
			prop, err = p.getProposalIn(ctx, tx, req.Proposal)
		}
		if err != nil {
			return err
		}
		if prop.Status != cairn.ProposalHeld {
			return cairn.Errorf(cairn.ECONFLICT, "proposal %d is %s; only a held proposal can be decided", prop.ID, prop.Status).
				WithHint("Try: cairn review list")
		}
		return nil
	}
	var id int64
	var err error
	if tx == nil {
		id, err = p.st.ProposalOfKey(ctx, req.Key)
	} else {
		id, err = p.st.ProposalOfKeyIn(ctx, tx.Backend(), req.Key)
	}
	switch {
	case err == nil:
		return cairn.Errorf(cairn.ECONFLICT, "%s was submitted already, as proposal %d", req.Key, id)
	case cairn.ErrorCode(err) != cairn.ENOTFOUND:
		return fmt.Errorf("admission: look up %s: %w", req.Key, err)
	}
	return nil
}

// judge runs the gates on the change against main's head as the store's
// readers see it: the merge onto a moved head, the path gates, the new
// policy's checks, the log entry's tree and, with preview, the lint gate on
// a snapshot of the index. It takes no lock; new objects stay in the
// request's batch. It returns errMoved when the index no longer reflects
// the head it read.
func (p *Pipeline) judge(ctx context.Context, req *Request, preview bool) (*judgement, error) {
	b := req.Batch
	if err := p.submittable(ctx, nil, req); err != nil {
		return nil, err
	}
	head, err := p.s.Head(ctx, Branch)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return nil, fmt.Errorf("admission: read main: %w", err)
	}
	if req.OnHead != nil {
		if err := req.OnHead(ctx, head); err != nil {
			return nil, err
		}
	}
	headTree, err := treeOf(ctx, p.s, head)
	if err != nil {
		return nil, err
	}
	j := &judgement{head: head, headTree: headTree, pol: p.policyAt(ctx, b, headTree)}
	baseTree := req.BaseTree
	if baseTree.IsZero() {
		if baseTree, err = treeOf(ctx, p.s, req.Base); err != nil {
			return nil, err
		}
	}
	result := req.Tree
	if headTree != baseTree && req.Tree != headTree {
		mr, err := b.MergeTrees(ctx, baseTree, req.Tree, headTree, nil)
		if err != nil {
			return nil, fmt.Errorf("admission: merge onto main: %w", err)
		}
		if len(mr.Conflicts) > 0 {
			out := &Outcome{Origin: req.Origin, Conflicts: mr.Conflicts}
			changes, err := b.Diff(ctx, baseTree, req.Tree, nil)
			if err != nil {
				return nil, err
			}
			// The change is not judged on its own merits here: a
			// cairn.yaml that does not parse names no agent.
			next, err := nextPolicy(ctx, b, changes)
			if err != nil && cairn.ErrorCode(err) != cairn.EINVALID {
				return nil, err
			}
			out.Findings = append(j.pol.gateChanges(changes, next, scripts(ctx, b, changes), req.Origin), gateConflicts(mr.Conflicts)...)
			out.Verdict = j.pol.judge(out.Findings, req.Origin, req.Route, false)
			proposed(req, out)
			j.out = out
			return j, nil
		}
		result, j.rebased = mr.Tree, true
	}
	changes, err := b.Diff(ctx, headTree, result, nil)
	if err != nil {
		return nil, fmt.Errorf("admission: diff: %w", err)
	}
	if len(changes) == 0 && !req.AllowEmpty && len(req.Outside) == 0 && len(req.Skipped) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "nothing to admit: %w", ErrEmpty)
	}
	next, err := nextPolicy(ctx, b, changes)
	if err != nil {
		return nil, err
	}
	if err := checkManifest(ctx, b, changes); err != nil {
		return nil, err
	}
	j.findings = j.pol.gateChanges(changes, next, scripts(ctx, b, changes), req.Origin)
	j.findings = append(j.findings, gateOutside(req.Outside)...)
	j.findings = append(j.findings, gateSkipped(req.Skipped)...)
	if len(j.pol.Policies) > 0 {
		if j.policies, err = changeInput(ctx, b, result, changes, req, nil); err != nil {
			return nil, err
		}
	}
	j.final = result
	if req.Log != nil {
		if j.final, err = p.appendLog(ctx, b, result, req.Log); err != nil {
			return nil, err
		}
	}
	if !preview {
		return j, nil
	}
	// The lint gate, on a snapshot of the index: nothing is written.
	pv, err := p.ix.Preview(ctx, b, head, j.final)
	switch {
	case errors.Is(err, index.ErrStale):
		return nil, errMoved
	case errors.Is(err, index.ErrBulk):
		// Judged by Apply in the write transaction.
	case err != nil:
		return nil, fmt.Errorf("admission: lint: %w", err)
	default:
		j.preview, j.lint = pv, p.outcome(req, j, pv.Delta)
	}
	return j, nil
}

// outcome judges a change by its gates' findings and the findings delta
// of its lint gate.
func (p *Pipeline) outcome(req *Request, j *judgement, delta *index.Delta) *Outcome {
	out := &Outcome{Origin: req.Origin, Rebased: j.rebased}
	findings := slices.Clone(j.findings)
	newLint := delta.New()
	out.Lint = lint.AtLeast(newLint, lint.Warning)
	findings = append(findings, gateLint(newLint)...)
	if j.policies != nil {
		// The policies see every other gate's findings.
		j.policies.setFindings(findings)
		findings = append(findings, j.pol.gatePolicies(j.policies)...)
	}
	out.Verdict = j.pol.judge(findings, req.Origin, req.Route, j.headTree == store.EmptyTree)
	out.Findings = findings
	proposed(req, out)
	return out
}

// admissible reports whether a judged change is to be committed: admitted
// by its gates, or forced by a person's decision (the verdict and findings
// stay as judged).
func admissible(req *Request, out *Outcome) bool { return out.Verdict == cairn.Admit || req.Force }

// decide finishes the judgement inside the write transaction and records
// the outcome: main must still be at the judged head (errMoved otherwise);
// the index is brought to the change's tree for the lint gate; an admitted
// change (or a forced one) is committed with the index kept, any other is
// recorded as a proposal with the index put back.
func (p *Pipeline) decide(ctx context.Context, tx *store.Tx, req *Request, j *judgement) (*Outcome, error) {
	tx.Use(req.Batch)
	if err := j.current(ctx, tx); err != nil {
		return nil, err
	}
	if err := p.submittable(ctx, tx, req); err != nil {
		return nil, err
	}
	if j.out != nil {
		return j.out, p.record(ctx, tx, req, j.out)
	}
	// The index update is kept only if the change is admitted: else the
	// transaction is rolled back (errNotAdmitted) and Submit records the
	// outcome in one of its own. A preview judged on the index as it is
	// here is made again by its writes alone.
	out, applied := j.lint, false
	if j.preview != nil {
		switch err := p.ix.ApplyPreview(ctx, tx, j.preview); {
		case err == nil:
			applied = true
		case !errors.Is(err, index.ErrStale):
			return nil, err
		}
	}
	if !applied {
		// No preview (a full build), or the index was rebuilt since.
		delta, err := p.ix.Apply(ctx, tx, j.final)
		if err != nil {
			return nil, err
		}
		out = p.outcome(req, j, delta)
	}
	if !admissible(req, out) {
		return out, errNotAdmitted
	}
	p.point("admit:judged", req.Route)
	return out, p.admit(ctx, tx, req, out, j.head, j.final)
}

// proposed holds a change its request proposes for review (Request.Propose).
func proposed(req *Request, out *Outcome) {
	if !req.Propose || req.Force {
		return
	}
	out.Findings = append(out.Findings, cairn.Finding{Gate: GateReview, Rule: "proposed", Verdict: cairn.Hold,
		Message: "proposed for review: a person decides whether it is admitted"})
	out.Verdict = cairn.Worst(out.Verdict, cairn.Hold)
}

// admit commits an admitted change and records it.
func (p *Pipeline) admit(ctx context.Context, tx *store.Tx, req *Request, out *Outcome, head, final cairn.Hash) error {
	b := req.Batch
	now := p.now()
	var prop *cairn.Proposal
	var err error
	status := cairn.ProposalAdmitted
	if req.Force {
		status = cairn.ProposalAccepted
	}
	if req.Proposal != 0 {
		if prop, err = p.getProposalIn(ctx, tx, req.Proposal); err != nil {
			return err
		}
	} else {
		prop = p.newProposal(req, out)
		prop.Status = status
		if err := p.insertProposal(ctx, tx, prop); err != nil {
			return err
		}
	}
	parents := []cairn.Hash{}
	if !head.IsZero() {
		parents = append(parents, head)
	}
	decider := req.Decider
	proposalCommit := req.Commit
	if proposalCommit.IsZero() && req.Origin == OriginAgent {
		// An agent's change keeps its own commit, by the agent, on its
		// base; the commit that admits it is a merge by the decider.
		c, err := tx.WriteCommit(ctx, b, store.CommitRequest{
			Tree: req.Tree, Parents: nonZero(append([]cairn.Hash{req.Base}, req.Parents...)),
			Principal: req.Principal, Message: req.Message, Meta: p.meta(req, prop.ID, "proposal"), AllowEmpty: true,
		})
		if err != nil {
			return err
		}
		proposalCommit = c.Hash
	}
	if !proposalCommit.IsZero() {
		parents = append(parents, proposalCommit)
		if decider == "" {
			decider = cairn.PrincipalSystem
		}
	} else {
		parents = append(parents, req.Parents...)
	}
	if decider == "" {
		decider = req.Principal
	}
	msg := req.Message
	if req.Force {
		msg = reviewedMessage(req.Message)
	}
	tx.SetValue(admittingKey{}, true)
	c, err := tx.Commit(ctx, b, store.CommitRequest{
		Branch: Branch, Expected: head, Parents: parents, Tree: final,
		Principal: decider, Message: msg, Meta: p.meta(req, prop.ID, string(cairn.Admit)), AllowEmpty: true,
	})
	tx.SetValue(admittingKey{}, false)
	if err != nil {
		return err
	}
	p.point("admit:main-moved", req.Route)
	out.Commit = c
	prop.Status, prop.Verdict, prop.Findings = status, out.Verdict, out.Findings
	prop.Result, prop.Commit = c.Hash, proposalCommit
	prop.Decided, prop.DecidedBy, prop.Error = now, decider, ""
	if err := p.decideProposal(ctx, tx, prop); err != nil {
		return err
	}
	if req.Proposal != 0 {
		// The branch goes with the decision, unless a person moved it
		// meanwhile (then it stays, holding their commit). A working tree
		// that holds it refuses the deletion, and so the decision.
		at, err := tx.Head(ctx, ProposalBranch(prop.ID))
		if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return err
		}
		if err == nil && at == req.Commit {
			if err := tx.UpdateRef(ctx, cairn.RefUpdate{Name: "heads/" + ProposalBranch(prop.ID), Kind: cairn.RefBranch,
				Old: req.Commit, New: cairn.Hash{}, Principal: decider, Message: "accepted"}); err != nil {
				return err
			}
		}
	}
	out.Proposal = prop
	action := "admit"
	if req.Force {
		action = "accept"
	}
	if err := p.Audit(ctx, tx, now, decider, action, prop.ID, c.Hash, map[string]any{"route": req.Route, "findings": len(out.Findings)}); err != nil {
		return err
	}
	if err := p.Event(ctx, tx, now, "proposal."+prop.Status, strconv.FormatInt(prop.ID, 10), map[string]any{
		"route": req.Route, "commit": c.Hash, "source": req.Source, "rebased": out.Rebased}); err != nil {
		return err
	}
	return p.runDecided(ctx, tx, req, out)
}

// record keeps a change the gates did not admit: the branch
// proposals/<id> at a commit of its tree, the proposal row, audit and
// event rows and the caller's rows.
func (p *Pipeline) record(ctx context.Context, tx *store.Tx, req *Request, out *Outcome) error {
	b := req.Batch
	tx.Use(b)
	now := p.now()
	status := cairn.ProposalHeld
	if out.Verdict == cairn.Reject {
		status = cairn.ProposalRejected
	}
	var prop *cairn.Proposal
	var err error
	if req.Proposal != 0 {
		if prop, err = p.getProposalIn(ctx, tx, req.Proposal); err != nil {
			return err
		}
		if prop.Status != cairn.ProposalHeld {
			return cairn.Errorf(cairn.ECONFLICT, "proposal %d is %s; only a held proposal can be decided", prop.ID, prop.Status)
		}
		prop.Status, prop.Verdict, prop.Findings = status, out.Verdict, out.Findings
		if !req.Commit.IsZero() {
			prop.Commit = req.Commit // the branch's head, as judged now (a fix)
		}
		if status == cairn.ProposalRejected {
			prop.Decided, prop.DecidedBy = now, cairn.PrincipalSystem
		}
		prop.Error = ""
		if err := p.decideProposal(ctx, tx, prop); err != nil {
			return err
		}
	} else {
		prop = p.newProposal(req, out)
		prop.Status = status
		if status == cairn.ProposalRejected {
			prop.Decided, prop.DecidedBy = now, cairn.PrincipalSystem
		}
		if err := p.insertProposal(ctx, tx, prop); err != nil {
			return err
		}
		c := req.Commit
		if c.IsZero() {
			cm, err := tx.WriteCommit(ctx, b, store.CommitRequest{
				Tree: req.Tree, Parents: nonZero(append([]cairn.Hash{req.Base}, req.Parents...)),
				Principal: req.Principal, Message: req.Message, Meta: p.meta(req, prop.ID, "proposal"), AllowEmpty: true,
			})
			if err != nil {
				return err
			}
			c = cm.Hash
		}
		prop.Commit = c
		if err := tx.UpdateRef(ctx, cairn.RefUpdate{Name: "heads/" + ProposalBranch(prop.ID), Kind: cairn.RefBranch,
			New: c, Principal: req.Principal, Message: string(out.Verdict) + ": " + firstLine(req.Message)}); err != nil {
			return err
		}
		if err := p.decideProposal(ctx, tx, prop); err != nil {
			return err
		}
	}
	out.Proposal = prop
	action := string(out.Verdict)
	if req.Proposal != 0 {
		action = "recheck"
	}
	if err := p.Audit(ctx, tx, now, cairn.PrincipalSystem, action, prop.ID, cairn.Hash{}, map[string]any{"route": req.Route, "findings": len(out.Findings)}); err != nil {
		return err
	}
	if err := p.Event(ctx, tx, now, "proposal."+prop.Status, strconv.FormatInt(prop.ID, 10), map[string]any{
		"route": req.Route, "source": req.Source, "findings": len(out.Findings)}); err != nil {
		return err
	}
	return p.runDecided(ctx, tx, req, out)
}

// ProposalBranch is the branch that keeps a proposal's tree.
func ProposalBranch(id int64) string { return ProposalPrefix + strconv.FormatInt(id, 10) }

// ProposalPrefix starts the names of the branches that hold proposals:
// admission's own, made only by it.
const ProposalPrefix = "proposals/"

func (p *Pipeline) newProposal(req *Request, out *Outcome) *cairn.Proposal {
	return &cairn.Proposal{
		Key: req.Key, Route: req.Route, Branch: Branch, Base: req.Base, Tree: req.Tree,
		Principal: req.Principal, Origin: string(req.Origin), Verdict: out.Verdict, Findings: out.Findings,
		Summary: req.Summary, Message: req.Message, Log: req.Log, Source: req.Source, Job: req.Job, Created: p.now(),
	}
}

func (p *Pipeline) meta(req *Request, id int64, verdict string) map[string]string {
	m := maps.Clone(req.Meta)
	if m == nil {
		m = map[string]string{}
	}
	m["proposal"] = strconv.FormatInt(id, 10)
	m["route"] = req.Route
	if verdict != "proposal" {
		m["verdict"] = verdict
	}
	if req.Source != "" {
		m["source"] = req.Source
	}
	if req.Job != 0 {
		m["job"] = strconv.FormatInt(req.Job, 10)
	}
	return m
}

func reviewedMessage(msg string) string {
	line, rest, _ := bytes.Cut([]byte(msg), []byte("\n"))
	if route, subject, ok := bytes.Cut(line, []byte(": ")); ok && !bytes.Contains(route, []byte(" ")) {
		line = []byte(string(route) + " (reviewed): " + string(subject))
	} else {
		line = append([]byte("reviewed: "), line...)
	}
	if len(rest) > 0 {
		return string(line) + "\n" + string(rest)
	}
	return string(line)
}

// blobReader reads file contents: a batch (its own, then the store's) or a
// transaction.
type blobReader interface {
	ReadBlob(ctx context.Context, h cairn.Hash) ([]byte, error)
	ReadBlobs(ctx context.Context, hs []cairn.Hash, fn func(h cairn.Hash, data []byte) error) error
}

// scripts returns whether each file written by changes starts with #!,
// reading their contents (from the proposal's batch or the store) in bulk
// first: one query per thousand files rather than one per file. Content
// that cannot be read counts as no script (the store's own checks report
// it).
func scripts(ctx context.Context, r blobReader, changes []cairn.Change) func(cairn.Entry) bool {
	var hs []cairn.Hash
	for _, c := range changes {
		if c.Kind != cairn.Deleted {
			hs = append(hs, c.New.Blob)
		}
	}
	script := make(map[cairn.Hash]bool)
	var mu sync.Mutex
	err := r.ReadBlobs(ctx, hs, func(h cairn.Hash, data []byte) error {
		if isScript(data) {
			mu.Lock()
			script[h] = true
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		// Fall back to reading one at a time what the bulk read could not.
		return func(e cairn.Entry) bool {
			data, err := r.ReadBlob(ctx, e.Blob)
			return err == nil && isScript(data)
		}
	}
	return func(e cairn.Entry) bool { return script[e.Blob] }
}

// nextPolicy returns the policy a change makes: nil when it leaves
// cairn.yaml alone, the defaults when it deletes it, else the new
// cairn.yaml, which must parse, and whose values the change sets must be
// in range (EINVALID otherwise).
func nextPolicy(ctx context.Context, b *store.Batch, changes []cairn.Change) (*Policy, error) {
	for _, c := range changes {
		switch {
		case c.Path != PolicyFile && (c.Kind != cairn.Renamed || c.Old.Path != PolicyFile):
			continue
		case c.Path != PolicyFile || c.Kind == cairn.Deleted:
			return &Policy{}, nil
		}
		data, err := b.ReadBlob(ctx, c.New.Blob)
		if err != nil {
			return nil, err
		}
		pol, err := ParsePolicy(data)
		if err != nil {
			return nil, err
		}
		var before []byte
		if c.Kind != cairn.Added && !c.Old.Blob.IsZero() {
			if before, err = b.ReadBlob(ctx, c.Old.Blob); err != nil && !errors.Is(err, cairn.ErrPurged) {
				return nil, err
			}
		}
		if err := CheckPolicyChange(before, data); err != nil {
			return nil, err
		}
		return pol, nil
	}
	return nil, nil
}

// checkManifest refuses a change that writes an eva.json Eva would refuse:
// an Eva brain's marker must stay one.
func checkManifest(ctx context.Context, b *store.Batch, changes []cairn.Change) error {
	for _, c := range changes {
		if c.Path != eva.ManifestFile || c.Kind == cairn.Deleted {
			continue
		}
		data, err := b.ReadBlob(ctx, c.New.Blob)
		if err != nil {
			return err
		}
		if _, err := eva.ParseManifest(data); err != nil {
			return err
		}
	}
	return nil
}

// policyAt reads cairn.yaml from a tree. A policy that does not parse
// (one that reached main before this cairn checked it) gives the
// defaults, with a log line: admission must never lock itself out.
func (p *Pipeline) policyAt(ctx context.Context, r treeReader, tree cairn.Hash) *Policy {
	e, err := r.Get(ctx, tree, PolicyFile)
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return &Policy{}
	}
	if err == nil {
		p.parsedMu.Lock()
		pol, ok := p.parsed[e.Blob]
		p.parsedMu.Unlock()
		if ok {
			return pol
		}
	}
	pol, err := PolicyAt(ctx, r, tree)
	if err == nil && !e.Blob.IsZero() {
		p.parsedMu.Lock()
		if len(p.parsed) >= 16 || p.parsed == nil {
			p.parsed = map[cairn.Hash]*Policy{}
		}
		p.parsed[e.Blob] = pol
		p.parsedMu.Unlock()
	}
	if err != nil {
		p.log.Warn("cairn.yaml on main does not parse; using the default policy", "err", err)
		return &Policy{}
	}
	return pol
}

// treeReader reads trees: a store, a batch or a transaction.
type treeReader interface {
	Get(ctx context.Context, tree cairn.Hash, path string) (cairn.Entry, error)
	ReadBlob(ctx context.Context, h cairn.Hash) ([]byte, error)
}

// PolicyAt reads the policy of a tree: its cairn.yaml, or the defaults
// when it has none.
func PolicyAt(ctx context.Context, r treeReader, tree cairn.Hash) (*Policy, error) {
	e, err := r.Get(ctx, tree, PolicyFile)
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return &Policy{}, nil
	}
	if err != nil {
		return nil, err
	}
	data, err := r.ReadBlob(ctx, e.Blob)
	if err != nil {
		return nil, err
	}
	return ParsePolicy(data)
}

// commitReader reads commits: the store or a transaction.
type commitReader interface {
	ReadCommit(ctx context.Context, h cairn.Hash) (*cairn.Commit, error)
}

// treeOf returns the tree of commit c; the empty tree for the zero hash.
func treeOf(ctx context.Context, r commitReader, c cairn.Hash) (cairn.Hash, error) {
	if c.IsZero() {
		return store.EmptyTree, nil
	}
	cm, err := r.ReadCommit(ctx, c)
	if err != nil {
		return cairn.Hash{}, err
	}
	return cm.Tree, nil
}

func nonZero(hs []cairn.Hash) []cairn.Hash {
	out := []cairn.Hash{}
	for _, h := range hs {
		if !h.IsZero() {
			out = append(out, h)
		}
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := bytes.Cut([]byte(s), []byte("\n"))
	return string(line)
}
