package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"cairn"
	"cairn/agent"
	"cairn/store"
)

// healthEvent is the kind of the event a health report is kept as, and
// healthSubject its subject.
const (
	healthEvent   = "health.report"
	healthSubject = "health"
)

// HealthReport is the vault's agent's health check of main, as kept.
type HealthReport struct {
	// ID names the report (12 hex digits).
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
	// Commit is main's head, which was checked; Agent the runtime that
	// checked it; By who asked.
	Commit   cairn.Hash            `json:"commit"`
	Agent    string                `json:"agent"`
	By       cairn.Principal       `json:"by,omitempty"`
	Summary  string                `json:"summary"`
	Findings []agent.HealthFinding `json:"findings"`
	// Dropped counts what the agent reported that was left out: pages
	// main does not have, findings of no known kind or past the bound.
	Dropped int          `json:"dropped"`
	Usage   *agent.Usage `json:"usage,omitempty"`
}

// Health runs the vault's agent's health check of main, read-only, and
// keeps its report, which HealthReports lists: a summary and findings
// (contradictions, weak provenance, stale claims, coverage gaps, research
// questions), each with the pages it rests on — pages main does not have
// are dropped and counted. The built-in agent (llm) and the agent CLIs
// check, read-only; another runtime is EINVALID with a hint
// (deterministic checks are cairn lint's).
// An agent's own failure is EUNAVAILABLE with its reason. It needs a
// principal.
func (a *App) Health(ctx context.Context) (*HealthReport, error) {
	who, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	rt, head, err := a.ingest.Agent(ctx)
	if err != nil {
		return nil, err
	}
	hc, ok := rt.(agent.HealthChecker)
	if !ok {
		return nil, cairn.Errorf(cairn.EINVALID, "the %s agent has no health check", rt.Name()).
			WithHint("The check needs a model: cairn settings set agent.runtime llm (with agent.model), or claude, codex or opencode. cairn lint makes the deterministic checks.")
	}
	reply, err := hc.Health(ctx, head, nil)
	if err != nil {
		return nil, agentError(ctx, rt, "check the vault", err)
	}
	key := make([]byte, 6)
	rand.Read(key)
	rep := &HealthReport{ID: hex.EncodeToString(key), Time: a.now().UTC(), Commit: head, Agent: rt.Name(), By: who,
		Summary: strings.TrimSpace(reply.Summary), Findings: []agent.HealthFinding{}, Usage: reply.Usage}
	err = a.View(head.String()).Read(ctx, func(s *Snapshot) error {
		for _, f := range reply.Findings {
			if !slices.Contains(agent.HealthKinds(), f.Kind) || len(rep.Findings) == agent.MaxHealthFindings {
				rep.Dropped++
				continue
			}
			pages := []string{}
			for _, ref := range f.Pages {
				p, err := s.Resolve(ctx, ref)
				if err != nil {
					if code := cairn.ErrorCode(err); code == cairn.ENOTFOUND || code == cairn.EINVALID || code == cairn.ECONFLICT {
						rep.Dropped++
						continue
					}
					return err
				}
				if !slices.Contains(pages, p) {
					pages = append(pages, p)
				}
			}
			f.Pages = pages
			rep.Findings = append(rep.Findings, f)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = a.v.Store.Update(ctx, func(tx *store.Tx) error {
		return a.v.Admit.Event(ctx, tx, rep.Time, healthEvent, healthSubject, rep)
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// maxHealthReports bounds how many reports HealthReports reads.
const maxHealthReports = 10000

// HealthReports returns the kept health reports, newest first, at most
// limit (default 20).
func (a *App) HealthReports(ctx context.Context, limit int) ([]*HealthReport, error) {
	if limit < 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "a list's limit is %d; it cannot be negative", limit)
	}
	if limit == 0 {
		limit = 20
	}
	var all []*HealthReport
	for after := int64(0); len(all) < maxHealthReports; {
		rows, err := a.v.Admit.EventsAbout(ctx, healthSubject, after, maxEvents)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.Kind != healthEvent {
				continue
			}
			var rep HealthReport
			if json.Unmarshal(r.Data, &rep) == nil {
				all = append(all, &rep)
			}
		}
		if len(rows) < maxEvents {
			break
		}
		after = rows[len(rows)-1].ID
	}
	slices.Reverse(all)
	return all[:min(len(all), limit)], nil
}

// HealthReportByID returns the kept report whose id starts with id (at
// least 4 hex digits); ENOTFOUND when none does, EINVALID when several do.
func (a *App) HealthReportByID(ctx context.Context, id string) (*HealthReport, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if len(id) < 4 || strings.Trim(id, "0123456789abcdef") != "" {
		return nil, cairn.Errorf(cairn.EINVALID, "%q is not a report's id (hex digits, at least 4)", id).
			WithHint("cairn health list gives the reports' ids.")
	}
	all, err := a.HealthReports(ctx, maxHealthReports)
	if err != nil {
		return nil, err
	}
	var found *HealthReport
	for _, r := range all {
		if strings.HasPrefix(r.ID, id) {
			if found != nil {
				return nil, cairn.Errorf(cairn.EINVALID, "several reports' ids start with %s", id).WithHint("Give more of the id.")
			}
			found = r
		}
	}
	if found == nil {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "there is no health report %s", id).WithHint("cairn health list gives the reports' ids.")
	}
	return found, nil
}
