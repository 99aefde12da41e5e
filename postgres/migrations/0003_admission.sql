-- The records beside the store: working trees, admission (proposals and
-- their audit), sources, the job queue's workers, tokens and the audit of
-- network requests, and OAuth clients and codes. The same rows as SQLite's
-- (sqlite/migrations 0003, 0004, 0009 and 0010), in the same encodings:
-- hashes are bytea, times unix nanoseconds. Text keys that are listed in
-- order sort by their bytes (COLLATE "C"), as in SQLite. The events table
-- and the trigger that makes every move of a ref an event are in 0001.
-- River's tables (river_job and friends) are made by River's own
-- migrations for its riverpgxv5 driver.

-- Working trees: folders that hold a branch's files for people to edit.
CREATE TABLE worktrees (
    id      BIGSERIAL PRIMARY KEY,
    path    TEXT COLLATE "C" NOT NULL UNIQUE,  -- absolute folder
    branch  TEXT COLLATE "C" NOT NULL,
    base    BYTEA,                             -- the commit the folder was last brought to
    pending BYTEA,                             -- a sync under way to this commit, if any
    created BIGINT NOT NULL
);
CREATE INDEX worktrees_branch ON worktrees (branch, path);

-- What each file looked like when cairn last read or wrote it, so status
-- hashes only files whose size or modification time changed.
CREATE TABLE worktree_files (
    worktree BIGINT NOT NULL,
    path     TEXT COLLATE "C" NOT NULL,
    size     BIGINT NOT NULL,
    mtime    BIGINT NOT NULL,
    blob     BYTEA  NOT NULL,
    checked  BIGINT NOT NULL,                  -- when the row was written
    PRIMARY KEY (worktree, path)
);

-- Paths whose base is not the base commit's version: files a person had
-- edited when the branch moved. A commit merges them three-way from here.
CREATE TABLE worktree_bases (
    worktree BIGINT NOT NULL,
    path     TEXT COLLATE "C" NOT NULL,
    blob     BYTEA,                            -- NULL: the file was absent
    size     BIGINT  NOT NULL,
    mode     INTEGER NOT NULL,
    PRIMARY KEY (worktree, path)
);

-- Every change submitted for admission into main, whatever its route,
-- with the verdict it got. A proposal that is held waits here for a
-- review; its tree is kept by the branch proposals/<id>.
CREATE TABLE proposals (
    id         BIGSERIAL PRIMARY KEY,
    key        TEXT COLLATE "C" NOT NULL UNIQUE,  -- who submitted what: a replay has the same key
    route      TEXT   NOT NULL,
    branch     TEXT   NOT NULL,
    base       BYTEA,                             -- the commit the change was made on
    tree       BYTEA  NOT NULL,                   -- the proposed tree
    proposal   BYTEA,                             -- the commit holding the proposed tree, when one was made
    result     BYTEA,                             -- the commit that admitted it
    principal  TEXT   NOT NULL,
    origin     TEXT   NOT NULL,                   -- agent, person, system
    status     TEXT   NOT NULL,                   -- admitted, held, rejected, accepted
    verdict    TEXT   NOT NULL,                   -- admit, hold, reject
    findings   TEXT   NOT NULL,                   -- JSON array of gate findings
    summary    TEXT   NOT NULL DEFAULT '',
    message    TEXT   NOT NULL DEFAULT '',
    log        TEXT   NOT NULL DEFAULT '',        -- JSON: the log.md entry admission writes, if any
    source     TEXT,                              -- the source it integrates, for ingest
    job        BIGINT,                            -- the job that made it
    error      TEXT   NOT NULL DEFAULT '',        -- why the last decision failed
    created    BIGINT NOT NULL,
    decided    BIGINT,
    decided_by TEXT,                              -- the principal who decided
    reason     TEXT   NOT NULL DEFAULT ''
);
CREATE INDEX proposals_status ON proposals (status) WHERE status = 'held';

-- Who decided what: every admission, hold, rejection and review decision.
CREATE TABLE audit (
    id          BIGSERIAL PRIMARY KEY,
    time        BIGINT NOT NULL,
    principal   TEXT   NOT NULL,
    action      TEXT   NOT NULL,                  -- admit, hold, reject, accept, recheck
    proposal    BIGINT,
    branch      TEXT   NOT NULL DEFAULT '',
    commit_hash BYTEA,
    detail      TEXT   NOT NULL DEFAULT ''
);

-- Sources: immutable input documents, named by the SHA-256 of their content.
CREATE TABLE sources (
    id       TEXT COLLATE "C" PRIMARY KEY,       -- SHA-256, hex
    name     TEXT COLLATE "C" NOT NULL,          -- the file name it was given
    path     TEXT COLLATE "C" NOT NULL,          -- where it is in the vault (raw/...); '' when it was refused
    size     BIGINT NOT NULL,
    status   TEXT   NOT NULL,                    -- queued, running, merged, held, rejected, failed
    job      BIGINT,                             -- the job that integrates it
    attempt  BIGINT NOT NULL DEFAULT 0,          -- the job attempt running it
    proposal BIGINT,                             -- the proposal the job made
    error    TEXT   NOT NULL DEFAULT '',
    hint     TEXT   NOT NULL DEFAULT '',
    created  BIGINT NOT NULL,
    updated  BIGINT NOT NULL
);
CREATE INDEX sources_status ON sources (status);
CREATE INDEX sources_job ON sources (job);
CREATE INDEX sources_name ON sources (name);
CREATE INDEX sources_path ON sources (path);

-- What happened to each source, in order.
CREATE TABLE source_history (
    source    TEXT COLLATE "C" NOT NULL,
    seq       BIGINT NOT NULL,
    time      BIGINT NOT NULL,
    status    TEXT   NOT NULL,
    principal TEXT   NOT NULL,
    detail    TEXT   NOT NULL DEFAULT '',
    PRIMARY KEY (source, seq)
);

-- Processes that run jobs, so that any worker can tell when another died
-- and rescue its jobs within seconds.
CREATE TABLE workers (
    id        TEXT COLLATE "C" PRIMARY KEY,      -- the River client id: host:pid:nonce
    host      TEXT    NOT NULL,
    pid       INTEGER NOT NULL,
    proc      TEXT    NOT NULL DEFAULT '',       -- the process's start time in clock ticks since boot, against pid reuse
    started   BIGINT  NOT NULL,
    heartbeat BIGINT  NOT NULL
);

-- Tokens for the network surfaces (the HTTP API, MCP over HTTP, the web
-- UI). A token's secret is never stored: only the SHA-256 of its random
-- part.
CREATE TABLE tokens (
    id         TEXT COLLATE "C" PRIMARY KEY,     -- public: the secret names it
    name       TEXT   NOT NULL,
    principal  TEXT   NOT NULL,                  -- user:NAME or agent:NAME
    scopes     TEXT   NOT NULL,                  -- comma-separated: read,propose,review,admin
    hash       BYTEA  NOT NULL,                  -- SHA-256 of the secret's random part
    created    BIGINT NOT NULL,
    created_by TEXT   NOT NULL,
    expires    BIGINT,                           -- NULL: never
    revoked    BIGINT                            -- NULL: not revoked
);

-- Every change asked over a network surface: who, with which token, by
-- which route, from where, and the status it got.
CREATE TABLE requests (
    id        BIGSERIAL PRIMARY KEY,
    time      BIGINT  NOT NULL,
    principal TEXT    NOT NULL,
    token     TEXT    NOT NULL,
    surface   TEXT    NOT NULL,                  -- http, mcp, web
    route     TEXT    NOT NULL,                  -- "POST /api/v1/changes"
    remote    TEXT    NOT NULL,
    status    INTEGER NOT NULL
);

-- cairn as an OAuth 2.1 authorization server for its own MCP endpoint:
-- the clients that registered themselves (RFC 7591), and the one-time
-- authorization codes a person granted them (with PKCE), each taken once.
CREATE TABLE oauth_clients (
    id            TEXT COLLATE "C" PRIMARY KEY,
    name          TEXT   NOT NULL,
    redirect_uris TEXT   NOT NULL,               -- JSON array
    created       BIGINT NOT NULL
);

CREATE TABLE oauth_codes (
    hash         BYTEA  PRIMARY KEY,             -- SHA-256 of the code
    client       TEXT   NOT NULL,
    redirect_uri TEXT   NOT NULL,
    challenge    TEXT   NOT NULL,                -- PKCE S256 challenge
    principal    TEXT   NOT NULL,
    scopes       TEXT   NOT NULL,                -- comma-separated
    expires      BIGINT NOT NULL
);
