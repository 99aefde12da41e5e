package main

// Helpers that reach into the vault, left for the commands of other files
// (maint.go's doctor, settings.go) until those call the application
// layer; the ingest, worker, sources and jobs commands do not use them.

import (
	"cairn"
	"cairn/admit"
	"cairn/ingest"
	"cairn/vault"
)

// jobs returns an ingest service of v, for doctor's check of sources
// (maint.go) until that moves into the application layer; the service
// makes its job queue when it needs one. The ingest, worker, sources and
// jobs commands use the App's own service.
func (a *cli) jobs(v *vault.Vault, _ bool, activity func(*ingest.Source, string, string)) (*ingest.Service, struct{}, error) {
	return ingest.New(v, &ingest.Options{Activity: activity, Logger: a.warnings(), Crash: a.vaultOptions().Crash}), struct{}{}, nil
}

// policyOf reads main's policy.
func policyOf(a *cli, v *vault.Vault) (*admit.Policy, error) {
	head, err := v.Store.Head(a.ctx, admit.Branch)
	if err != nil {
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return &admit.Policy{}, nil
		}
		return nil, err
	}
	c, err := v.Store.ReadCommit(a.ctx, head)
	if err != nil {
		return nil, err
	}
	return admit.PolicyAt(a.ctx, v.Store, c.Tree)
}
