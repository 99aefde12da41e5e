// Package worktree keeps folders of plain files in step with branches: the
// vault folder itself is the working tree of main, and more working trees
// can hold other branches. A person edits the files with any editor
// (Obsidian included); status compares them with the base commit, reading
// only files whose size or modification time changed; commit turns them
// into a commit, merging three-way when the branch moved meanwhile; sync
// brings a folder to a new commit without touching a file the person
// edited, and says which ones it left alone.
//
// Nothing a person wrote is lost: a sync never overwrites a local edit, and
// a file left alone keeps, as its own base, the version the person edited,
// so that the next commit merges the edit with what arrived meanwhile. A
// sync is journaled: when a process dies half way, the next one finishes it.
package worktree
