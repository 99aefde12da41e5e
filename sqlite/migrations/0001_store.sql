-- The versioned store: objects, refs, the ref log, pins and purges.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

INSERT INTO meta (key, value) VALUES ('format_version', '1');

-- Content-addressed objects. data is NULL once the object is purged.
CREATE TABLE objects (
    id      INTEGER PRIMARY KEY,
    hash    BLOB    NOT NULL UNIQUE,
    kind    INTEGER NOT NULL,           -- 1 blob, 2 tree node, 3 commit
    codec   INTEGER NOT NULL,           -- 0 raw, 1 zstd
    size    INTEGER NOT NULL,           -- canonical (uncompressed) bytes
    data    BLOB,
    created INTEGER NOT NULL            -- unix seconds
);

CREATE TABLE purges (
    hash      BLOB    PRIMARY KEY,
    principal TEXT    NOT NULL,
    reason    TEXT    NOT NULL,
    time      INTEGER NOT NULL          -- unix nanoseconds
) WITHOUT ROWID;

-- Branches (heads/...) and tags (tags/...).
CREATE TABLE refs (
    name    TEXT    PRIMARY KEY,
    kind    INTEGER NOT NULL,           -- 1 branch, 2 tag
    hash    BLOB    NOT NULL,
    updated INTEGER NOT NULL            -- unix nanoseconds
) WITHOUT ROWID;

CREATE TABLE reflog (
    id        INTEGER PRIMARY KEY,
    name      TEXT    NOT NULL,
    old       BLOB,
    new       BLOB,
    principal TEXT    NOT NULL,
    message   TEXT    NOT NULL,
    time      INTEGER NOT NULL          -- unix nanoseconds
);
CREATE INDEX reflog_time ON reflog (time);
CREATE INDEX reflog_name_time ON reflog (name, time);

CREATE TABLE pins (
    hash    BLOB    NOT NULL,
    reason  TEXT    NOT NULL,
    created INTEGER NOT NULL,           -- unix nanoseconds
    expires INTEGER,                    -- unix nanoseconds; NULL never
    PRIMARY KEY (hash, reason)
) WITHOUT ROWID;
