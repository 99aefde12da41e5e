-- A search for a prefix of one or two letters no longer makes FTS5 merge
-- the page lists of every word the prefix starts: each page's key keeps
-- which first letters and first two letters its words start with, for the
-- text and for the title (a bitmap; sqlite/index_text.go, initials), and
-- such a search checks the pages the rest of the query finds against it.
-- Every row lacks them, so the index is emptied here; opening the vault
-- rebuilds it from main's head.

ALTER TABLE fts_keys ADD COLUMN text_initials BLOB;
ALTER TABLE fts_keys ADD COLUMN title_initials BLOB;

DELETE FROM files;
DELETE FROM keys;
DELETE FROM links;
DELETE FROM link_keys;
DELETE FROM cites;
DELETE FROM fields;
DELETE FROM findings;
INSERT INTO fts (fts) VALUES ('delete-all');
INSERT INTO fts_title (fts_title) VALUES ('delete-all');
DELETE FROM fts_keys;
DELETE FROM fts_words;
DELETE FROM index_state;
