-- Tokens for the network surfaces (the HTTP API, MCP over HTTP, the web
-- UI), and the audit of the changes asked through them. A token's secret
-- is never stored: only the SHA-256 of its random part.
CREATE TABLE tokens (
    id         TEXT    PRIMARY KEY,      -- public: the secret names it
    name       TEXT    NOT NULL,
    principal  TEXT    NOT NULL,         -- user:NAME or agent:NAME
    scopes     TEXT    NOT NULL,         -- comma-separated: read,propose,review,admin
    hash       BLOB    NOT NULL,         -- SHA-256 of the secret's random part
    created    INTEGER NOT NULL,         -- unix nanoseconds
    created_by TEXT    NOT NULL,
    expires    INTEGER,                  -- unix nanoseconds; NULL: never
    revoked    INTEGER                   -- unix nanoseconds; NULL: not revoked
) WITHOUT ROWID;

-- Every change asked over a network surface: who, with which token, by
-- which route, from where, and the status it got.
CREATE TABLE requests (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    time      INTEGER NOT NULL,
    principal TEXT    NOT NULL,
    token     TEXT    NOT NULL,
    surface   TEXT    NOT NULL,          -- http, mcp, web
    route     TEXT    NOT NULL,          -- "POST /api/v1/changes"
    remote    TEXT    NOT NULL,
    status    INTEGER NOT NULL
);

-- Every move of a branch or tag (made, moved, deleted), whatever route
-- moved it, is an event in the same transaction, so the event stream
-- carries the commits to every branch in the order they landed.
CREATE TRIGGER reflog_event AFTER INSERT ON reflog BEGIN
    INSERT INTO events (time, kind, subject, data) VALUES (NEW.time, 'ref.updated', NEW.name,
        json_object('old', lower(hex(NEW.old)), 'new', lower(hex(NEW.new)),
                    'principal', NEW.principal, 'message', NEW.message));
END;

-- A job's activity is read by its source: the events about one subject.
CREATE INDEX events_subject ON events (subject, id);
