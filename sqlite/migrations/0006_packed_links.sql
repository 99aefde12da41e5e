-- Links keep what the parse found about them in one value (index
-- package, encodeLink) instead of ten columns: a full build writes about
-- five links a page, and each column cost a conversion and a bind. The
-- columns left are the ones queries select on and the resolution, which
-- updates rewrite. The index is emptied here; opening the vault rebuilds
-- it from main's head.

DROP TABLE links;
CREATE TABLE links (
    src    INTEGER NOT NULL,
    ord    INTEGER NOT NULL,
    flags  INTEGER NOT NULL,     -- 1 embed, 2 escapes, 4 has a heading or block
    status INTEGER NOT NULL,     -- 1 resolved, 2 broken, 3 ambiguous
    dst    INTEGER,              -- files.id when resolved
    step   INTEGER NOT NULL,
    detail TEXT,                 -- JSON: candidates, missing heading/block, same page
    link   BLOB    NOT NULL,     -- kind, line, column, target, heading, block, label, path, property
    PRIMARY KEY (src, ord)
) WITHOUT ROWID;
CREATE INDEX links_dst ON links (dst) WHERE dst IS NOT NULL;

DELETE FROM files;
DELETE FROM keys;
DELETE FROM link_keys;
DELETE FROM cites;
DELETE FROM findings;
INSERT INTO fts (fts) VALUES ('delete-all');
INSERT INTO fts_title (fts_title) VALUES ('delete-all');
DELETE FROM index_state;
