-- The derived index of branch main: files, resolution keys, links,
-- lint findings and full-text search. Everything here can be rebuilt
-- from the store (cairn reindex).

-- The commit the index reflects, per indexed ref.
CREATE TABLE index_state (
    ref         TEXT    PRIMARY KEY,
    commit_hash BLOB    NOT NULL,
    tree        BLOB    NOT NULL
) WITHOUT ROWID;

-- Every file of the tree; pages carry what their parse found. Files are
-- found by path through keys (step 1 holds each path's case fold).
CREATE TABLE files (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused; also the full-text rowid
    path         TEXT    NOT NULL,
    kind         INTEGER NOT NULL,     -- 1 page, 2 attachment, 3 source, 4 contract, 5 hidden
    blob         BLOB    NOT NULL,
    size         INTEGER NOT NULL,
    page_id      TEXT,                 -- NULL when the path without .md
    title        TEXT,
    title_source INTEGER,              -- 1 frontmatter, 2 heading, 3 file name
    type         TEXT,
    frontmatter  TEXT,                 -- JSON object; title and type are in their columns
    aliases      TEXT,                 -- JSON array
    sources      TEXT,                 -- JSON array
    headings     TEXT,                 -- JSON array of [level, text]
    block_ids    TEXT,                 -- JSON array
    problems     TEXT,                 -- JSON array
    inbound      INTEGER NOT NULL DEFAULT 0,  -- resolved links from other files
    depth        INTEGER               -- links from index.md; NULL when unreachable
);
CREATE INDEX files_type ON files (type) WHERE type IS NOT NULL;

-- What each file answers to when a link is resolved (markdown.ResolutionKeys).
CREATE TABLE keys (
    value TEXT    NOT NULL,
    step  INTEGER NOT NULL,
    file  INTEGER NOT NULL,
    PRIMARY KEY (value, step, file)
) WITHOUT ROWID;

-- Every link of every page, with where it leads.
CREATE TABLE links (
    src      INTEGER NOT NULL,
    ord      INTEGER NOT NULL,
    kind     INTEGER NOT NULL,        -- 1 wiki, 2 embed, 3 markdown, 4 frontmatter
    target   TEXT    NOT NULL,
    heading  TEXT    NOT NULL,
    block    TEXT    NOT NULL,
    label    TEXT    NOT NULL,
    path     TEXT    NOT NULL,
    flags    INTEGER NOT NULL,        -- 1 embed, 2 escapes
    property TEXT    NOT NULL,
    line     INTEGER NOT NULL,
    col      INTEGER NOT NULL,
    status   INTEGER NOT NULL,        -- 1 resolved, 2 broken, 3 ambiguous
    dst      INTEGER,                 -- files.id when resolved
    step     INTEGER NOT NULL,
    detail   TEXT,                    -- JSON: candidates, missing heading/block, same page
    PRIMARY KEY (src, ord)
) WITHOUT ROWID;
CREATE INDEX links_dst ON links (dst) WHERE dst IS NOT NULL;

-- The key values each link looks up: when a value gains or loses a
-- holder, exactly these links may resolve differently.
CREATE TABLE link_keys (
    value TEXT    NOT NULL,
    src   INTEGER NOT NULL,
    ord   INTEGER NOT NULL,
    PRIMARY KEY (value, src, ord)
) WITHOUT ROWID;

-- The sources each page cites, folded, for source-not-found.
CREATE TABLE cites (
    value TEXT    NOT NULL,
    file  INTEGER NOT NULL,
    PRIMARY KEY (value, file)
) WITHOUT ROWID;

CREATE TABLE findings (
    id       INTEGER PRIMARY KEY,
    file     INTEGER NOT NULL,
    rule     TEXT    NOT NULL,
    severity TEXT    NOT NULL,
    subject  TEXT    NOT NULL,
    message  TEXT    NOT NULL
);
CREATE INDEX findings_file ON findings (file);

-- Full text of pages, contentless: bodies live only in the store, and
-- snippets are cut from there. The index folds words itself (lower case,
-- no diacritics, no stopwords) and hands FTS5 words separated by spaces;
-- columns without positions keep the index small (phrases are checked
-- against the text). A 64 MB hash lets a rebuild write few segments.
CREATE VIRTUAL TABLE fts USING fts5 (
    title, body,
    content = '', contentless_delete = 1,
    tokenize = 'ascii', detail = column
);
INSERT INTO fts (fts, rank) VALUES ('hashsize', 67108864);
