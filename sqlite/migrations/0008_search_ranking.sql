-- Search ranks by a page's length in words. The full text keeps which
-- pages hold each word and nothing else (detail = none), so FTS5's bm25()
-- is zero for every page and ranked by it nothing but the title came
-- first. files.words holds a page's word count (NULL for files that are
-- not pages), which orders the pages that match. fts_short and
-- fts_title_short hold the full text again of the shortest pages only,
-- those of at most fts_tier.words words (about 2% of the pages; the
-- bound falls as the vault grows): a search of a word found in most pages finds its
-- first results there and does not rank the whole vault. The vocabulary
-- table gives how many pages hold a word, for the score. Every page row
-- lacks its count, so the index is emptied here; opening the vault
-- rebuilds it from main's head.

ALTER TABLE files ADD COLUMN words INTEGER;
CREATE VIRTUAL TABLE fts_vocab USING fts5vocab (fts, row);
CREATE VIRTUAL TABLE fts_short USING fts5 (
    text,
    content = '', contentless_delete = 1,
    tokenize = 'ascii', detail = none
);
CREATE VIRTUAL TABLE fts_title_short USING fts5 (
    title,
    content = '', contentless_delete = 1,
    tokenize = 'ascii', detail = none
);
CREATE TABLE fts_tier (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    words INTEGER NOT NULL,  -- every page of at most this many words is in fts_short
    pages INTEGER NOT NULL   -- the pages in fts_short
);

DELETE FROM files;
DELETE FROM keys;
DELETE FROM links;
DELETE FROM link_keys;
DELETE FROM cites;
DELETE FROM findings;
INSERT INTO fts (fts) VALUES ('delete-all');
INSERT INTO fts_title (fts_title) VALUES ('delete-all');
DELETE FROM index_state;
