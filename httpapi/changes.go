package httpapi

import (
	"context"
	"encoding/base64"

	"cairn"
	"cairn/admit"
	"cairn/app"
)

func (s *Server) branches(ctx context.Context, _ *struct{}) (*body[Items[cairn.Ref]], error) {
	return list(s.app.Branches(ctx))
}

type branchIn struct {
	Name string `query:"name" required:"true" doc:"The branch's name (main, drafts/x, proposals/4)."`
}

type refOut struct {
	ETag string `header:"ETag"`
	Body cairn.Ref
}

func (s *Server) branch(ctx context.Context, in *branchIn) (*refOut, error) {
	refs, err := s.app.Branches(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		if r.Name == in.Name {
			return &refOut{ETag: etag(r.Hash), Body: r}, nil
		}
	}
	return nil, cairn.Errorf(cairn.ENOTFOUND, "there is no branch %q", in.Name).WithHint("GET /api/v1/branches lists them.")
}

type createBranchIn struct {
	Body struct {
		Name string `json:"name" minLength:"1" doc:"The new branch's name."`
		From string `json:"from,omitempty" doc:"Where it starts: a branch, tag or commit. Default: main."`
	}
}

func (s *Server) createBranch(ctx context.Context, in *createBranchIn) (*refOut, error) {
	from := in.Body.From
	if from == "" {
		from = admit.Branch
	}
	ref, err := s.app.CreateBranch(ctx, in.Body.Name, from)
	if err != nil {
		return nil, err
	}
	return &refOut{ETag: etag(ref.Hash), Body: ref}, nil
}

type deleteBranchIn struct {
	Name    string `query:"name" required:"true" doc:"The branch's name."`
	IfMatch string `header:"If-Match" doc:"The head the branch is expected at (its ETag); without it, it is deleted wherever it is."`
}

// DeletedBranch is a branch deleted, with the head it had.
type DeletedBranch struct {
	Name string     `json:"name"`
	Was  cairn.Hash `json:"was"`
}

func (s *Server) deleteBranch(ctx context.Context, in *deleteBranchIn) (*body[DeletedBranch], error) {
	expected, err := parseETag("If-Match", in.IfMatch)
	if err != nil {
		return nil, err
	}
	was, err := s.app.DeleteBranch(ctx, in.Name, expected)
	if err != nil {
		return nil, err
	}
	return &body[DeletedBranch]{Body: DeletedBranch{Name: in.Name, Was: was}}, nil
}

func (s *Server) tags(ctx context.Context, _ *struct{}) (*body[Items[cairn.Ref]], error) {
	return list(s.app.Tags(ctx))
}

type createTagIn struct {
	Body struct {
		Name    string `json:"name" minLength:"1" doc:"The tag's name."`
		Rev     string `json:"rev,omitempty" doc:"What it names: a branch, tag or commit. Default: main."`
		Message string `json:"message,omitempty" doc:"A note kept in the ref log."`
	}
}

func (s *Server) createTag(ctx context.Context, in *createTagIn) (*refOut, error) {
	rev := in.Body.Rev
	if rev == "" {
		rev = admit.Branch
	}
	ref, err := s.app.CreateTag(ctx, in.Body.Name, rev, in.Body.Message)
	if err != nil {
		return nil, err
	}
	return &refOut{ETag: etag(ref.Hash), Body: ref}, nil
}

type mergeIn struct {
	Body app.MergeRequest
}

func (s *Server) merge(ctx context.Context, in *mergeIn) (*body[*app.MergeResult], error) {
	if in.Body.Into == "" {
		in.Body.Into = admit.Branch
	}
	return ok(s.app.Merge(ctx, in.Body))
}

type revertIn struct {
	Body app.RevertRequest
}

func (s *Server) revert(ctx context.Context, in *revertIn) (*body[*app.RevertResult], error) {
	if in.Body.Branch == "" {
		in.Body.Branch = admit.Branch
	}
	return ok(s.app.Revert(ctx, in.Body))
}

// FileEdit is one change of a changeset: a file's new content (as text, or
// in base64 for other bytes) or its deletion.
type FileEdit struct {
	Path          string  `json:"path" minLength:"1" doc:"The file's vault path."`
	Content       *string `json:"content,omitempty" doc:"The file's new text."`
	ContentBase64 *string `json:"content_base64,omitempty" doc:"The file's new bytes, in base64 (for what is not text)."`
	Delete        bool    `json:"delete,omitempty" doc:"Delete the file (no content)."`
}

// Changeset is a set of changes to commit to a branch, made on the head
// the request's If-Match names.
type Changeset struct {
	Branch  string     `json:"branch,omitempty" doc:"The branch to change. Default: main (a proposal is always for main)."`
	Message string     `json:"message" minLength:"1" doc:"Why."`
	Changes []FileEdit `json:"changes" minItems:"1" doc:"The changes, each path once."`
}

type changesIn struct {
	IfMatch string `header:"If-Match" doc:"The head the changes were made on (the branch's ETag): nothing changes if the branch is elsewhere."`
	Body    Changeset
}

// request checks the changeset and returns it as the application layer's
// request: a missing If-Match is 428; content given twice, or on a
// deletion, or content that is not base64, EINVALID.
func (in *changesIn) request() (app.ChangesRequest, error) {
	req := app.ChangesRequest{Branch: in.Body.Branch, Message: in.Body.Message}
	if in.IfMatch == "" {
		return req, newProblem(codePreconditionRequired, "a changeset needs If-Match: the head of the branch it was made on",
			"Read the branch (GET /api/v1/branch?name=main) and send its ETag as If-Match.")
	}
	base, err := parseETag("If-Match", in.IfMatch)
	if err != nil {
		return req, err
	}
	req.Base = base
	if req.Branch == "" {
		req.Branch = admit.Branch
	}
	for _, e := range in.Body.Changes {
		fe := app.FileEdit{Path: e.Path, Delete: e.Delete}
		switch {
		case e.Content != nil && e.ContentBase64 != nil:
			return req, cairn.Errorf(cairn.EINVALID, "path %s: content is given twice, as text and in base64", cairn.Quote(e.Path)).
				WithHint("Send content for text, or content_base64 for other bytes.")
		case e.Delete && (e.Content != nil || e.ContentBase64 != nil):
			return req, cairn.Errorf(cairn.EINVALID, "path %s: a deletion has no content", cairn.Quote(e.Path))
		case !e.Delete && e.Content == nil && e.ContentBase64 == nil:
			return req, cairn.Errorf(cairn.EINVALID, "path %s: no content and no deletion", cairn.Quote(e.Path)).
				WithHint("Send content, content_base64, or delete: true.")
		case e.Content != nil:
			fe.Content = []byte(*e.Content)
		case e.ContentBase64 != nil:
			data, err := base64.StdEncoding.DecodeString(*e.ContentBase64)
			if err != nil {
				return req, cairn.Errorf(cairn.EINVALID, "path %s: content_base64 is not base64: %v", cairn.Quote(e.Path), err).
					WithHint("Encode the bytes in standard base64 (RFC 4648, with padding).")
			}
			fe.Content = data
		}
		req.Changes = append(req.Changes, fe)
	}
	return req, nil
}

type changesOut struct {
	ETag string `header:"ETag"`
	Body *app.ChangesResult
}

func changesResult(res *app.ChangesResult) *changesOut {
	out := &changesOut{Body: res}
	if res.Commit != nil {
		out.ETag = etag(res.Commit.Hash)
	}
	return out
}

func (s *Server) commitChanges(ctx context.Context, in *changesIn) (*changesOut, error) {
	req, err := in.request()
	if err != nil {
		return nil, err
	}
	res, err := s.app.CommitChanges(ctx, req)
	if err != nil {
		return nil, err
	}
	return changesResult(res), nil
}

func (s *Server) proposeChanges(ctx context.Context, in *changesIn) (*changesOut, error) {
	req, err := in.request()
	if err != nil {
		return nil, err
	}
	res, err := s.app.ProposeChanges(ctx, req)
	if err != nil {
		return nil, err
	}
	return changesResult(res), nil
}

type commitEditsIn struct {
	Body struct {
		Tree    string   `json:"tree,omitempty" doc:"The working tree's folder on the server's machine. Default: the vault's own."`
		Message string   `json:"message" minLength:"1" doc:"Why."`
		Paths   []string `json:"paths,omitempty" doc:"Only the edits under these files or folders."`
	}
}

func (s *Server) commitEdits(ctx context.Context, in *commitEditsIn) (*body[*app.CommitEditsResult], error) {
	a, err := s.inTree(ctx, in.Body.Tree)
	if err != nil {
		return nil, err
	}
	res, err := a.CommitEdits(ctx, app.CommitEditsRequest{Message: in.Body.Message, Paths: in.Body.Paths})
	if err != nil {
		return nil, err
	}
	return &body[*app.CommitEditsResult]{Body: res}, nil
}

type proposalsIn struct {
	Status string `query:"status" doc:"held (default), admitted, accepted, rejected or all."`
	Limit  int    `query:"limit" minimum:"0" maximum:"1000" doc:"The most, newest first (default 100)."`
}

func (s *Server) proposals(ctx context.Context, in *proposalsIn) (*body[Items[*cairn.Proposal]], error) {
	return list(s.app.Proposals(ctx, admit.ProposalFilter{Status: in.Status, Limit: in.Limit}))
}

type proposalIn struct {
	ID    int64 `path:"id" doc:"The proposal's id."`
	Patch bool  `query:"patch" doc:"Render each change as a unified diff."`
}

func (s *Server) showProposal(ctx context.Context, in *proposalIn) (*body[*app.ProposalView], error) {
	v, err := s.app.ShowProposal(ctx, in.ID, app.ProposalOptions{Patch: in.Patch})
	if err != nil {
		return nil, err
	}
	v.Changes = nonNil(v.Changes)
	return &body[*app.ProposalView]{Body: v}, nil
}

type decideIn struct {
	ID int64 `path:"id" doc:"The proposal's id."`
}

func (s *Server) accept(ctx context.Context, in *decideIn) (*body[*app.Decision], error) {
	return ok(s.app.Accept(ctx, in.ID))
}

type rejectIn struct {
	ID   int64 `path:"id" doc:"The proposal's id."`
	Body struct {
		Reason string `json:"reason,omitempty" doc:"Why; kept with the decision."`
	}
}

func (s *Server) reject(ctx context.Context, in *rejectIn) (*body[*app.Decision], error) {
	return ok(s.app.Reject(ctx, in.ID, in.Body.Reason))
}

func (s *Server) recheck(ctx context.Context, in *decideIn) (*body[*app.Decision], error) {
	return ok(s.app.Recheck(ctx, in.ID))
}
