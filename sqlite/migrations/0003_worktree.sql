-- Working trees: folders that hold a branch's files for people to edit.

CREATE TABLE worktrees (
    id      INTEGER PRIMARY KEY,
    path    TEXT    NOT NULL UNIQUE,   -- absolute folder
    branch  TEXT    NOT NULL,
    base    BLOB,                      -- the commit the folder was last brought to
    pending BLOB,                      -- a sync under way to this commit, if any
    created INTEGER NOT NULL           -- unix nanoseconds
);

-- What each file looked like when cairn last read or wrote it, so status
-- hashes only files whose size or modification time changed.
CREATE TABLE worktree_files (
    worktree INTEGER NOT NULL,
    path     TEXT    NOT NULL,
    size     INTEGER NOT NULL,
    mtime    INTEGER NOT NULL,         -- unix nanoseconds
    blob     BLOB    NOT NULL,
    checked  INTEGER NOT NULL,         -- when the row was written, unix nanoseconds
    PRIMARY KEY (worktree, path)
) WITHOUT ROWID;

-- Paths whose base is not the base commit's version: files a person had
-- edited when the branch moved. A commit merges them three-way from here.
CREATE TABLE worktree_bases (
    worktree INTEGER NOT NULL,
    path     TEXT    NOT NULL,
    blob     BLOB,                     -- NULL: the file was absent
    size     INTEGER NOT NULL,
    mode     INTEGER NOT NULL,
    PRIMARY KEY (worktree, path)
) WITHOUT ROWID;
