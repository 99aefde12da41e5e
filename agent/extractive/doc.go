// Package extractive is cairn's default agent runtime, "extractive":
// offline and deterministic, it needs no key and no setting. It writes an
// extractive summary of the source (key passages chosen by TextRank, key
// terms, links to the pages whose titles occur in it) and adds it to the
// index, through a draft in the store (Extract does the writing; Runtime
// reads the vault for it).
//
// The package registers the runtime with package agent when it is
// imported: import _ "cairn/agent/extractive".
package extractive
