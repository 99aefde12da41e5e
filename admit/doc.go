// Package admit is the admission pipeline: every change to main — an
// ingest agent's work, a person's commit, a merge, an import, a revert, a
// settings change, a review decision — is a proposal that goes through the
// same gates, and a store hook refuses any move of main the pipeline did
// not make.
//
// Gates return findings with stable identities (gate, rule, page,
// subject). The verdict table (defaultVerdicts, overridable under
// verdicts: in cairn.yaml) maps each gate to a verdict for an agent's
// change and for a person's: admit, hold (a review) or reject. An admitted
// change lands in one transaction with the index update, the log entry,
// the proposal, audit and event rows and the caller's rows (a job's
// completion), so a replay can never admit twice. A held change waits as
// the branch proposals/<id>; accepting or rejecting it is atomic too.
//
// Judging takes SQLite's single writer lock only for what needs it. The
// merge onto main's head, the path gates and the new policy's checks run
// on what the store's readers see; the write transaction then checks that
// main's head is still the one judged (judging again on the new head if
// not), runs the lint gate, whose findings come from bringing the index to
// the change's tree, and writes the outcome. For a change not admitted
// that transaction is rolled back, index update and all (cheaper than
// undoing the update to a savepoint), and the proposal is recorded by a
// short transaction of its own. The lint gate is the part of a held
// change's judgement that still holds the lock: its findings need the index
// brought to the change's tree.
package admit
