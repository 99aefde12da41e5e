-- A smaller index. Full text becomes one column of words without
-- positions or columns (detail = none: FTS5 keeps only which pages hold
-- each word, about 40% of what detail = column kept), for matching and
-- BM25; titles get a table of their own for the "every word in the
-- title" ranking. A link lookup keeps a 64-bit hash of the value it looks
-- up instead of its text. The index is emptied here; opening the vault
-- rebuilds it from main's head.

DROP TABLE fts;
CREATE VIRTUAL TABLE fts USING fts5 (
    text,
    content = '', contentless_delete = 1,
    tokenize = 'ascii', detail = none
);
INSERT INTO fts (fts, rank) VALUES ('hashsize', 67108864);
CREATE VIRTUAL TABLE fts_title USING fts5 (
    title,
    content = '', contentless_delete = 1,
    tokenize = 'ascii', detail = none
);

DROP TABLE link_keys;
CREATE TABLE link_keys (
    hash INTEGER NOT NULL,    -- lookupHash of the value
    src  INTEGER NOT NULL,
    ord  INTEGER NOT NULL,
    PRIMARY KEY (hash, src, ord)
) WITHOUT ROWID;

DELETE FROM files;
DELETE FROM keys;
DELETE FROM links;
DELETE FROM cites;
DELETE FROM findings;
DELETE FROM index_state;
