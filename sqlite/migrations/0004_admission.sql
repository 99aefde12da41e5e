-- Admission, sources and durable work. Jobs themselves live in River's
-- tables (river_job and friends), created by River's own migrations.

-- Every change submitted for admission into main, whatever its route,
-- with the verdict it got. A proposal that is held waits here for a
-- review; its tree is kept by the branch proposals/<id>.
CREATE TABLE proposals (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    key        TEXT    NOT NULL UNIQUE,   -- who submitted what: a replay has the same key
    route      TEXT    NOT NULL,          -- ingest, commit, merge, import, revert, settings, review
    branch     TEXT    NOT NULL,
    base       BLOB,                      -- the commit the change was made on
    tree       BLOB    NOT NULL,          -- the proposed tree
    proposal   BLOB,                      -- the commit holding the proposed tree, when one was made
    result     BLOB,                      -- the commit that admitted it
    principal  TEXT    NOT NULL,          -- who made the change
    origin     TEXT    NOT NULL,          -- agent, person, system
    status     TEXT    NOT NULL,          -- admitted, held, rejected, accepted
    verdict    TEXT    NOT NULL,          -- admit, hold, reject
    findings   TEXT    NOT NULL,          -- JSON array of gate findings
    summary    TEXT    NOT NULL DEFAULT '',
    message    TEXT    NOT NULL DEFAULT '',
    log        TEXT    NOT NULL DEFAULT '',  -- JSON: the log.md entry admission writes, if any
    source     TEXT,                      -- the source it integrates, for ingest
    job        INTEGER,                   -- the job that made it
    error      TEXT    NOT NULL DEFAULT '',  -- why the last decision failed
    created    INTEGER NOT NULL,          -- unix nanoseconds
    decided    INTEGER,                   -- unix nanoseconds
    decided_by TEXT,                      -- the principal who decided
    reason     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX proposals_status ON proposals (status) WHERE status = 'held';

-- Sources: immutable input documents, named by the SHA-256 of their content.
CREATE TABLE sources (
    id       TEXT    PRIMARY KEY,         -- SHA-256, hex
    name     TEXT    NOT NULL,            -- the file name it was given
    path     TEXT    NOT NULL,            -- where it is in the vault (raw/...); '' when it was refused
    size     INTEGER NOT NULL,
    status   TEXT    NOT NULL,            -- queued, running, merged, held, rejected, failed
    job      INTEGER,                     -- the job that integrates it
    attempt  INTEGER NOT NULL DEFAULT 0,  -- the job attempt running it
    proposal INTEGER,                     -- the proposal the job made
    error    TEXT    NOT NULL DEFAULT '',
    hint     TEXT    NOT NULL DEFAULT '',
    created  INTEGER NOT NULL,
    updated  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sources_status ON sources (status);

-- What happened to each source, in order.
CREATE TABLE source_history (
    source    TEXT    NOT NULL,
    seq       INTEGER NOT NULL,
    time      INTEGER NOT NULL,
    status    TEXT    NOT NULL,
    principal TEXT    NOT NULL,
    detail    TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (source, seq)
) WITHOUT ROWID;

-- Who decided what: every admission, hold, rejection and review decision.
CREATE TABLE audit (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    time        INTEGER NOT NULL,
    principal   TEXT    NOT NULL,
    action      TEXT    NOT NULL,         -- admit, hold, reject, accept, recheck
    proposal    INTEGER,
    branch      TEXT    NOT NULL DEFAULT '',
    commit_hash BLOB,
    detail      TEXT    NOT NULL DEFAULT ''
);

-- Events for progress displays and, later, live feeds: one row per thing
-- that happened, in order.
CREATE TABLE events (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    time    INTEGER NOT NULL,
    kind    TEXT    NOT NULL,             -- e.g. source.queued, ingest.merged, agent.activity
    subject TEXT    NOT NULL DEFAULT '',  -- what it is about: a source id, a proposal id
    data    TEXT    NOT NULL DEFAULT '{}' -- JSON
);

-- Processes that run jobs, so that any worker can tell when another died
-- and rescue its jobs within seconds.
CREATE TABLE workers (
    id        TEXT    PRIMARY KEY,        -- the River client id: host:pid:nonce
    host      TEXT    NOT NULL,
    pid       INTEGER NOT NULL,
    proc      TEXT    NOT NULL DEFAULT '',  -- the process's start time in clock ticks since boot, against pid reuse
    started   INTEGER NOT NULL,
    heartbeat INTEGER NOT NULL
) WITHOUT ROWID;
