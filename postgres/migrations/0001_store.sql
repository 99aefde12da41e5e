-- The versioned store and the vault's own records: objects, refs, the ref
-- log, pins, purges and the meta values. The same rows as SQLite's
-- (sqlite/migrations/0001_store.sql), in the same encodings: hashes are
-- bytea, times unix nanoseconds (created: unix seconds). Text keys that
-- are listed in order sort by their bytes (COLLATE "C"), as in SQLite.

CREATE TABLE meta (
    key   TEXT COLLATE "C" PRIMARY KEY,
    value TEXT NOT NULL
);

INSERT INTO meta (key, value) VALUES ('format_version', '1');

-- Content-addressed objects. data is NULL once the object is purged.
CREATE TABLE objects (
    hash    BYTEA    PRIMARY KEY,
    kind    SMALLINT NOT NULL,          -- 1 blob, 2 tree node, 3 commit
    codec   SMALLINT NOT NULL,          -- 0 raw, 1 zstd
    size    BIGINT   NOT NULL,          -- canonical (uncompressed) bytes
    data    BYTEA,
    created BIGINT   NOT NULL           -- unix seconds
);
-- Objects are compressed by cairn already: PostgreSQL should not try again.
ALTER TABLE objects ALTER COLUMN data SET STORAGE EXTERNAL;

CREATE TABLE purges (
    hash      BYTEA  PRIMARY KEY,
    principal TEXT   NOT NULL,
    reason    TEXT   NOT NULL,
    time      BIGINT NOT NULL
);

-- Branches (heads/...) and tags (tags/...).
CREATE TABLE refs (
    name    TEXT COLLATE "C" PRIMARY KEY,
    kind    SMALLINT NOT NULL,          -- 1 branch, 2 tag
    hash    BYTEA    NOT NULL,
    updated BIGINT   NOT NULL
);

CREATE TABLE reflog (
    id        BIGSERIAL PRIMARY KEY,
    name      TEXT COLLATE "C" NOT NULL,
    old       BYTEA,
    new       BYTEA,
    principal TEXT   NOT NULL,
    message   TEXT   NOT NULL,
    time      BIGINT NOT NULL
);
CREATE INDEX reflog_time ON reflog (time);
CREATE INDEX reflog_name_time ON reflog (name, time);

CREATE TABLE pins (
    hash    BYTEA  NOT NULL,
    reason  TEXT   NOT NULL,
    created BIGINT NOT NULL,
    expires BIGINT,                     -- NULL never
    PRIMARY KEY (hash, reason)
);

-- Events for progress displays and live feeds: one row per thing that
-- happened, numbered in the order their transactions committed (every
-- writer holds the vault's write lock; see package postgres).
CREATE TABLE events (
    id      BIGSERIAL PRIMARY KEY,
    time    BIGINT NOT NULL,
    kind    TEXT   NOT NULL,
    subject TEXT   NOT NULL DEFAULT '',
    data    TEXT   NOT NULL DEFAULT '{}'  -- JSON
);
CREATE INDEX events_subject ON events (subject, id);

-- Every move of a branch or tag is an event in the same transaction, as
-- SQLite's trigger reflog_event does.
CREATE FUNCTION reflog_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (time, kind, subject, data) VALUES (NEW.time, 'ref.updated', NEW.name,
        json_build_object('old', coalesce(encode(NEW.old, 'hex'), ''), 'new', coalesce(encode(NEW.new, 'hex'), ''),
                          'principal', NEW.principal, 'message', NEW.message)::text);
    RETURN NULL;
END $$;
CREATE TRIGGER reflog_event AFTER INSERT ON reflog FOR EACH ROW EXECUTE FUNCTION reflog_event();
