-- cairn as an OAuth 2.1 authorization server for its own MCP endpoint:
-- the clients that registered themselves (RFC 7591), and the one-time
-- authorization codes a person granted them (with PKCE), each taken once.
CREATE TABLE oauth_clients (
    id            TEXT    PRIMARY KEY,
    name          TEXT    NOT NULL,
    redirect_uris TEXT    NOT NULL,      -- JSON array
    created       INTEGER NOT NULL       -- unix nanoseconds
) WITHOUT ROWID;

CREATE TABLE oauth_codes (
    hash         BLOB    PRIMARY KEY,    -- SHA-256 of the code
    client       TEXT    NOT NULL,
    redirect_uri TEXT    NOT NULL,
    challenge    TEXT    NOT NULL,       -- PKCE S256 challenge
    principal    TEXT    NOT NULL,
    scopes       TEXT    NOT NULL,       -- comma-separated
    expires      INTEGER NOT NULL        -- unix nanoseconds
) WITHOUT ROWID;
