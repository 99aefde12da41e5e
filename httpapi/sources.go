package httpapi

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"cairn"
	"cairn/app"
	"cairn/ingest"
)

// uploadIn is sources uploaded as multipart/form-data: one part named
// "file" for each, its file name the source's name.
type uploadIn struct {
	RawBody huma.MultipartFormFiles[struct {
		Files []huma.FormFile `form:"file" contentType:"application/octet-stream" required:"true" doc:"Each source, as a file part named file whose filename is the source's name."`
	}]
}

// data reads the uploaded files.
func (in *uploadIn) data() ([]ingest.Data, error) {
	files := in.RawBody.Data().Files
	if len(files) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "no files were uploaded").
			WithHint("Send multipart/form-data with a part named file for each source.")
	}
	out := make([]ingest.Data, 0, len(files))
	for _, f := range files {
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read the upload %s: %w", f.Filename, err)
		}
		out = append(out, ingest.Data{Name: f.Filename, Data: data})
	}
	return out, nil
}

func (s *Server) addSources(ctx context.Context, in *uploadIn) (*body[*app.IngestResult], error) {
	items, err := in.data()
	if err != nil {
		return nil, err
	}
	return ok(s.app.IngestData(ctx, items, app.IngestOptions{Detach: true}))
}

// IngestLine is one line of an ingest's stream (JSON lines): exactly one
// of its fields is set. Added comes first, once the sources are stored and
// queued; then Progress and Event as the jobs run; last Result, or Error
// when the ingest failed or the server stopped (the sources not finished
// stay queued: a worker runs them).
type IngestLine struct {
	Added    []*ingest.Added   `json:"added,omitempty" doc:"What was done with each file, once they are stored"`
	Progress *IngestProgress   `json:"progress,omitempty" doc:"How many of the sources waited for have a verdict"`
	Event    *app.Event        `json:"event,omitempty" doc:"An event of the vault, as it happens"`
	Result   *app.IngestResult `json:"result,omitempty" doc:"Where every source ended"`
	Error    *Problem          `json:"error,omitempty" doc:"Why the ingest stopped"`
}

// IngestProgress is how many of the sources an ingest waits for have a
// verdict.
type IngestProgress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// ingestRoute registers the route that uploads sources and streams their
// progress until each has a verdict, as JSON lines (IngestLine). The
// server's worker runs the jobs.
func (s *Server) ingestRoute(r route) {
	op := r
	register(s, op, func(ctx context.Context, in *uploadIn) (*huma.StreamResponse, error) {
		items, err := in.data()
		if err != nil {
			return nil, err
		}
		// ctx carries the token's principal, who ingests.
		return &huma.StreamResponse{Body: func(hctx huma.Context) {
			_, w := humago.Unwrap(hctx)
			st := newStream(w, s.opts.WriteTimeout, "application/x-ndjson")
			reqCtx := ctx
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() {
				select {
				case <-s.stopping:
					cancel()
				case <-ctx.Done():
				}
			}()
			line := func(l IngestLine) {
				if err := st.write(string(mustJSON(l)) + "\n"); err != nil {
					cancel() // the client went: stop waiting, the jobs go on
				}
			}
			res, err := s.app.IngestData(ctx, items, app.IngestOptions{
				Added:    func(added []*ingest.Added) { line(IngestLine{Added: added}) },
				Progress: func(done, total int) { line(IngestLine{Progress: &IngestProgress{Done: done, Total: total}}) },
				Event:    func(ev *app.Event) { line(IngestLine{Event: ev}) },
			})
			switch {
			case err != nil && ctx.Err() != nil && reqCtx.Err() == nil:
				line(IngestLine{Error: newProblem(cairn.EUNAVAILABLE, "the server is stopping; the sources not finished stay queued",
					"Their jobs run when a worker runs again; cairn sources shows where they are.")})
			case err != nil:
				line(IngestLine{Error: problemOf(err)})
			default:
				line(IngestLine{Result: res})
			}
		}}, nil
	})
	// The document describes the stream's lines.
	o := s.api.OpenAPI().Paths[Base+r.path].Post
	o.Responses["200"] = &huma.Response{
		Description: "JSON lines, each an IngestLine, until each source has a verdict",
		Content: map[string]*huma.MediaType{"application/x-ndjson": {
			Schema: s.api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[IngestLine](), true, "IngestLine"),
		}},
	}
}

// eventsRoute registers the event stream, described as text/event-stream.
func (s *Server) eventsRoute(r route) {
	register(s, r, s.eventStream)
	o := s.api.OpenAPI().Paths[Base+r.path].Get
	o.Responses["200"] = &huma.Response{
		Description: "Server-sent events: each has the event table's id, the event's kind as its name, and the event (Event) as JSON data",
		Content: map[string]*huma.MediaType{"text/event-stream": {
			Schema: &huma.Schema{Type: huma.TypeString, Description: "An event stream (text/event-stream)"},
		}},
	}
}

type sourcesIn struct {
	Status string `query:"status" doc:"Only sources of this status: queued, running, merged, held, rejected or failed."`
	Cursor string `query:"cursor" doc:"The next cursor of the previous part; none for the first."`
	Limit  int    `query:"limit" minimum:"0" maximum:"10000" doc:"The most sources of the part (default 1000, at most 10000)."`
}

// SourcePage is a part of the sources, newest first.
type SourcePage struct {
	Items []*ingest.Source `json:"items"`
	// Total is the number of sources of the status asked for.
	Total int    `json:"total"`
	Next  string `json:"next,omitempty" doc:"The cursor of the next part, when there is one"`
}

func (s *Server) sources(ctx context.Context, in *sourcesIn) (*body[SourcePage], error) {
	off, err := offset(in.Cursor)
	if err != nil {
		return nil, err
	}
	limit := cmpInt(in.Limit, defaultPart)
	// One more than the part, to know whether another follows whatever
	// the count, read apart, says.
	l, err := s.app.Sources(ctx, app.SourceFilter{Status: in.Status, Offset: off, Limit: limit + 1})
	if err != nil {
		return nil, err
	}
	out := SourcePage{Items: l.Sources, Total: l.Total}
	if len(out.Items) > limit {
		out.Items, out.Next = out.Items[:limit], cursorAt(off+limit)
	}
	return &body[SourcePage]{Body: out}, nil
}

type sourceIn struct {
	Ref string `path:"ref" doc:"A source's id (4 or more leading hex digits) or name."`
}

func (s *Server) source(ctx context.Context, in *sourceIn) (*body[*ingest.Source], error) {
	return ok(s.app.Source(ctx, in.Ref))
}

func (s *Server) retrySource(ctx context.Context, in *sourceIn) (*body[*ingest.Source], error) {
	return ok(s.app.RetrySource(ctx, in.Ref))
}

type jobsIn struct {
	State string `query:"state" doc:"Only jobs in these states, comma-separated: queued, scheduled, running, retrying, completed, cancelled, failed."`
	Limit int    `query:"limit" minimum:"0" maximum:"1000" doc:"The most, newest first (default 100)."`
}

func (s *Server) jobs(ctx context.Context, in *jobsIn) (*body[Items[*app.Job]], error) {
	var states []string
	if in.State != "" {
		states = strings.Split(in.State, ",")
	}
	return list(s.app.Jobs(ctx, app.JobFilter{States: states, Limit: in.Limit}))
}

type jobIn struct {
	ID int64 `path:"id" doc:"The job's id."`
}

func (s *Server) job(ctx context.Context, in *jobIn) (*body[*app.Job], error) {
	return ok(s.app.Job(ctx, in.ID))
}

func (s *Server) cancelJob(ctx context.Context, in *jobIn) (*body[*app.Job], error) {
	return ok(s.app.CancelJob(ctx, in.ID))
}

func (s *Server) retryJob(ctx context.Context, in *jobIn) (*body[*app.Job], error) {
	return ok(s.app.RetryJob(ctx, in.ID))
}
