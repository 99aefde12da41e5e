-- The full text's rows are found in the order search ranks them. A page's
-- row id in fts and fts_title is its text key, its word count in the high
-- bits and a slot in the low 20 (sqlite/index_text.go): FTS5 returns
-- the matches of a query in row id order, so shortest page first, and a
-- search reads the first few matches of a word found in most pages instead
-- of ranking every one. The short pages' second copy of the full text
-- (migration 0008), which did that for the shortest 2% of the pages only,
-- goes. Every row's id changes, so the index is emptied here; opening the
-- vault rebuilds it from main's head.

DROP TABLE fts_short;
DROP TABLE fts_title_short;
DROP TABLE fts_tier;

DELETE FROM files;
DELETE FROM keys;
DELETE FROM links;
DELETE FROM link_keys;
DELETE FROM cites;
DELETE FROM fields;
DELETE FROM findings;
INSERT INTO fts (fts) VALUES ('delete-all');
INSERT INTO fts_title (fts_title) VALUES ('delete-all');
DELETE FROM fts_words;
DELETE FROM index_state;

-- Which file each key of the full text is (key: word count << 20 | slot).
CREATE TABLE fts_keys (
    key  INTEGER PRIMARY KEY,
    file INTEGER NOT NULL
);
CREATE UNIQUE INDEX fts_keys_file ON fts_keys (file);
