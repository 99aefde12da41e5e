package httpapi

import (
	"context"
	"time"

	"cairn"
	"cairn/admit"
	"cairn/app"
	"cairn/auth"
)

func (s *Server) settings(ctx context.Context, _ *struct{}) (*body[Items[admit.Setting]], error) {
	return list(s.app.Settings(ctx))
}

type settingIn struct {
	Key string `path:"key" doc:"A key of cairn.yaml, like agent.runtime."`
}

func (s *Server) setting(ctx context.Context, in *settingIn) (*body[*admit.Setting], error) {
	return ok(s.app.Setting(ctx, in.Key))
}

type setSettingIn struct {
	Key  string `path:"key" doc:"A key of cairn.yaml, like agent.runtime."`
	Body struct {
		Value string `json:"value" doc:"The new value; empty removes the key (its default applies)."`
	}
}

func (s *Server) setSetting(ctx context.Context, in *setSettingIn) (*body[*app.SettingChange], error) {
	return ok(s.app.SetSetting(ctx, in.Key, in.Body.Value))
}

type doctorIn struct {
	Quick bool `query:"quick" doc:"Compare only the index's files with main's tree."`
}

func (s *Server) doctor(ctx context.Context, in *doctorIn) (*body[*app.DoctorReport], error) {
	r, err := s.app.Doctor(ctx, app.DoctorOptions{Quick: in.Quick})
	if err != nil {
		return nil, err
	}
	r.Problems = nonNil(r.Problems)
	return &body[*app.DoctorReport]{Body: r}, nil
}

// GCRequest asks gc to collect.
type GCRequest struct {
	Grace  string `json:"grace,omitempty" doc:"Spare unreachable objects younger than this, like 1h (default 1h)."`
	Now    bool   `json:"now,omitempty" doc:"Drop the grace period (only safe when nothing else writes)."`
	DryRun bool   `json:"dry_run,omitempty" doc:"Count what would go, delete nothing."`
}

// Options returns the request as the application layer's options.
func (r GCRequest) Options() (app.GCOptions, error) {
	opts := app.GCOptions{Now: r.Now, DryRun: r.DryRun}
	if r.Grace != "" {
		d, err := time.ParseDuration(r.Grace)
		if err != nil {
			return opts, cairn.Errorf(cairn.EINVALID, "grace %q is not a duration", r.Grace).WithHint("Like 1h or 30m.")
		}
		opts.Grace = d
	}
	return opts, nil
}

type gcIn struct {
	Body GCRequest
}

func (s *Server) gc(ctx context.Context, in *gcIn) (*body[*app.Collected], error) {
	opts, err := in.Body.Options()
	if err != nil {
		return nil, err
	}
	return ok(s.app.GC(ctx, opts))
}

type purgeIn struct {
	Body struct {
		Path   string `json:"path" minLength:"1" doc:"The file whose content goes."`
		At     string `json:"at" minLength:"1" doc:"The revision at which the path holds that content."`
		Reason string `json:"reason" minLength:"1" doc:"Why; kept in the record."`
	}
}

func (s *Server) purge(ctx context.Context, in *purgeIn) (*body[*app.Purged], error) {
	return ok(s.app.Purge(ctx, in.Body.Path, in.Body.At, in.Body.Reason))
}

func (s *Server) reindex(ctx context.Context, _ *struct{}) (*body[*app.Reindexed], error) {
	return ok(s.app.Reindex(ctx))
}

func (s *Server) tokens(ctx context.Context, _ *struct{}) (*body[Items[*auth.Token]], error) {
	return list(s.app.Tokens(ctx))
}

type createTokenIn struct {
	Body app.TokenRequest
}

func (s *Server) createToken(ctx context.Context, in *createTokenIn) (*body[*app.NewToken], error) {
	return ok(s.app.CreateToken(ctx, in.Body))
}

type tokenIn struct {
	ID string `path:"id" doc:"The token's id."`
}

func (s *Server) revokeToken(ctx context.Context, in *tokenIn) (*body[*auth.Token], error) {
	return ok(s.app.RevokeToken(ctx, in.ID))
}

type auditIn struct {
	After int64 `query:"after" minimum:"0" doc:"Requests after this id (0: from the first)."`
	Limit int   `query:"limit" minimum:"0" maximum:"1000" doc:"At most this many (default 100)."`
}

func (s *Server) auditLog(ctx context.Context, in *auditIn) (*body[Items[*auth.Request]], error) {
	return list(s.app.AuditedRequests(ctx, in.After, in.Limit))
}
