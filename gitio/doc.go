// Package gitio moves history between git repositories and a cairn store.
//
// [ImportHistory] reads the first-parent history of a ref in a git
// repository and replays it, oldest first, as commits on a new cairn branch:
// each git commit becomes one cairn commit with the same message and author
// time, a principal derived from the author, and in the commit metadata the
// git hash ("git.commit") and the author and committer as git wrote them,
// with their addresses, dates and time zones ("git.author",
// "git.committer"). A merge commit imports as its change against its first
// parent; the history of the merged side is not imported. Files a
// vault cannot hold (names [cairn.CleanPath] refuses, paths that differ
// only in case, symbolic links, submodules, oversize files) are left out and
// listed in the result; the import goes on without them.
//
// [ExportGit] writes the whole history of a branch, merges with all their
// parents, into a new git repository through git fast-import and checks out
// its head. A commit imported from git gets back its author, committer and
// message, so that exporting an imported history gives the same git log
// (and, when nothing was left out and no merge flattened, the same commits);
// its cairn hash, principal and metadata go into a git note. Any other
// commit's hash, principal and metadata travel as trailers at the end of its
// message.
//
// [ExportFiles] writes the files of one commit into a folder. Both exports
// write content purged from the store as a one-line placeholder that says
// when, by whom and why it was purged, and list each file that got one.
//
// ImportHistory and ExportGit talk to the git binary on PATH, never to a
// library: an import runs rev-list once and then three long-lived processes
// (log, diff-tree --stdin, cat-file --batch), however long the history; an
// export runs one fast-import. Each is tied to the caller's context.
//
// A repository is untrusted input: nothing in it, and nothing in the
// person's own git configuration, may make git run a program. Every git
// command runs through one helper that gives it an environment of its own
// (nothing inherited, an empty HOME, an empty PATH and exec path, no system
// or global configuration, no transport, no lazy fetch) and command-line
// settings that turn off every program the repository's configuration could
// name. Only two rev-parse commands read the imported repository's
// configuration; its objects are read through a bare repository in a
// private temporary folder that borrows them as an alternate object store.
// docs/git.md lists each setting and what stops it.
package gitio
