package app

import (
	"context"

	"cairn"
	"cairn/admit"
	"cairn/auth"
	"cairn/index"
	"cairn/ingest"
	"cairn/worktree"
)

// Service is every operation a surface may ask of a vault wherever the
// vault is: *App implements it on a vault this process opened, and
// httpapi.Client as a client of cairn serve. The command line holds a
// Service and does not know which (cairn's one front door with two
// implementations). Each method is documented on App.
//
// The working tree a Service works in (Status, CommitEdits, a Diff with
// the folder, the branch commands default to) is the one it was opened
// for: the folder the command runs in.
//
// What only the process on the vault's machine can do, because it reads
// or writes folders there or runs jobs (Init and Adopt, ImportFolder,
// ImportHistory, ExportFiles, ExportGit, AddWorktree, RemoveWorktree,
// RunWorker), is a method of App only.
type Service interface {
	// Close releases the Service: an App closes the vault; a client its
	// connections.
	Close() error
	// Branch is the branch operations default to: the working tree's, or
	// main.
	Branch() string
	// WorkTree is the folder of the working tree the Service works in, as
	// the vault records it; "" when it works in none.
	WorkTree() string

	ReadFile(ctx context.Context, rev, path string) (*FileAt, error)
	List(ctx context.Context, rev, dir string, opts ListOptions) (*Listing, error)
	Log(ctx context.Context, rev string, opts LogOptions) ([]*cairn.Commit, error)
	ShowCommit(ctx context.Context, rev string) (*CommitDetail, error)
	Diff(ctx context.Context, from, to string, opts DiffOptions) (*TreeDiff, error)
	Status(ctx context.Context, paths ...string) (*worktree.Status, error)
	Worktrees(ctx context.Context) ([]*worktree.Tree, error)

	Search(ctx context.Context, q index.SearchQuery) ([]index.SearchResult, error)
	Links(ctx context.Context, page string) ([]index.LinkInfo, error)
	Backlinks(ctx context.Context, page string, opts BacklinkOptions) (*index.LinkPage, error)
	Lint(ctx context.Context, opts LintOptions) (*LintReport, error)
	// Types lists the types declared at rev (main when ""); Type is one of
	// them with the schema findings of its pages, at most limit.
	Types(ctx context.Context, rev string) ([]TypeSummary, error)
	// Pages lists the pages at rev (main when "") that f selects: by
	// folder, type and conditions on frontmatter fields.
	Pages(ctx context.Context, rev string, f PageFilter) (*PageList, error)
	Type(ctx context.Context, rev, name string, limit int) (*TypeDetail, error)

	Branches(ctx context.Context) ([]cairn.Ref, error)
	CreateBranch(ctx context.Context, name, from string) (cairn.Ref, error)
	DeleteBranch(ctx context.Context, name string, expected cairn.Hash) (cairn.Hash, error)
	Tags(ctx context.Context) ([]cairn.Ref, error)
	CreateTag(ctx context.Context, name, rev, message string) (cairn.Ref, error)
	Merge(ctx context.Context, req MergeRequest) (*MergeResult, error)
	Revert(ctx context.Context, req RevertRequest) (*RevertResult, error)

	CommitEdits(ctx context.Context, req CommitEditsRequest) (*CommitEditsResult, error)
	CommitChanges(ctx context.Context, req ChangesRequest) (*ChangesResult, error)
	ProposeChanges(ctx context.Context, req ChangesRequest) (*ChangesResult, error)

	Proposals(ctx context.Context, f admit.ProposalFilter) ([]*cairn.Proposal, error)
	ShowProposal(ctx context.Context, id int64, opts ProposalOptions) (*ProposalView, error)
	Accept(ctx context.Context, id int64) (*Decision, error)
	Reject(ctx context.Context, id int64, reason string) (*Decision, error)
	Recheck(ctx context.Context, id int64) (*Decision, error)

	Ask(ctx context.Context, req AskRequest) (*Answer, error)
	Health(ctx context.Context) (*HealthReport, error)
	HealthReports(ctx context.Context, limit int) ([]*HealthReport, error)
	HealthReportByID(ctx context.Context, id string) (*HealthReport, error)

	Ingest(ctx context.Context, files []string, opts IngestOptions) (*IngestResult, error)
	IngestData(ctx context.Context, items []ingest.Data, opts IngestOptions) (*IngestResult, error)
	Sources(ctx context.Context, f SourceFilter) (*SourceList, error)
	Source(ctx context.Context, ref string) (*ingest.Source, error)
	RetrySource(ctx context.Context, ref string) (*ingest.Source, error)
	Jobs(ctx context.Context, f JobFilter) ([]*Job, error)
	Job(ctx context.Context, id int64) (*Job, error)
	CancelJob(ctx context.Context, id int64) (*Job, error)
	RetryJob(ctx context.Context, id int64) (*Job, error)
	Events(ctx context.Context, after int64, limit int) ([]*Event, error)
	LastEvent(ctx context.Context) (int64, error)

	Settings(ctx context.Context) ([]admit.Setting, error)
	Setting(ctx context.Context, key string) (*admit.Setting, error)
	SetSetting(ctx context.Context, key, value string) (*SettingChange, error)

	Doctor(ctx context.Context, opts DoctorOptions) (*DoctorReport, error)
	GC(ctx context.Context, opts GCOptions) (*Collected, error)
	Purge(ctx context.Context, path, at, reason string) (*Purged, error)
	Reindex(ctx context.Context) (*Reindexed, error)

	CreateToken(ctx context.Context, req TokenRequest) (*NewToken, error)
	Tokens(ctx context.Context) ([]*auth.Token, error)
	RevokeToken(ctx context.Context, id string) (*auth.Token, error)
}

var _ Service = (*App)(nil)

// InTree returns the App working in the working tree whose folder is dir:
// what a server does for a client in that folder. A secondary working tree
// moved to dir is recorded there, as opening the vault from it would do,
// and moved says so. The App returned shares a's vault: close a, never
// it. A dir that is no working tree of the vault is ENOTFOUND; a copy of
// a tree still in its place EINVALID.
func (a *App) InTree(ctx context.Context, dir string) (c *App, moved string, err error) {
	t, moved, err := a.v.TreeAt(ctx, dir)
	if err != nil {
		return nil, "", err
	}
	cp := *a
	cp.tree = t
	return &cp, moved, nil
}

// WorkTree returns the folder of the working tree the App works in, ""
// for none.
func (a *App) WorkTree() string {
	if a.tree == nil {
		return ""
	}
	return a.tree.Path
}
