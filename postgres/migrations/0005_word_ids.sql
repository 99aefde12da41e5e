-- The full text keeps each page's distinct words as the numbers its
-- vocabulary gives them (fts_vocab.id), in integer arrays with GIN
-- indexes, in place of tsvectors of the words themselves: a GIN index of
-- four-byte keys is built in about half the time (BENCHMARKS.md), and the
-- rows hold a third of the bytes. A page matches a term when its array
-- holds the term's word's number, a prefix term when it holds the number
-- of any word the prefix starts (the vocabulary's words are in order).
--
-- A word gets its number when a page first holds it (the numbers after
-- the largest the vocabulary holds, in the write's transaction, not from
-- a sequence, whose numbers a rollback would not give back), and keeps it
-- until the next full build numbers the words again from 1. The index is
-- emptied so that opening the vault rebuilds it with the numbers.

DELETE FROM files;
DELETE FROM keys;
DELETE FROM links;
DELETE FROM link_keys;
DELETE FROM cites;
DELETE FROM fields;
DELETE FROM findings;
DELETE FROM fts;
DELETE FROM fts_short;
DELETE FROM fts_mid;
DELETE FROM fts_more;
DELETE FROM fts_vocab;
UPDATE fts_stats SET pages = 0, words = 0, more = 0, short_words = -1, short = 0, mid_words = -1, mid = 0;
DELETE FROM index_state;

ALTER TABLE fts_vocab ADD COLUMN id INTEGER NOT NULL;
CREATE UNIQUE INDEX fts_vocab_id ON fts_vocab (id);

ALTER TABLE fts ALTER COLUMN title TYPE INTEGER[] USING '{}', ALTER COLUMN body TYPE INTEGER[] USING '{}';
ALTER TABLE fts_short ALTER COLUMN title TYPE INTEGER[] USING '{}', ALTER COLUMN body TYPE INTEGER[] USING '{}';
ALTER TABLE fts_mid ALTER COLUMN title TYPE INTEGER[] USING '{}', ALTER COLUMN body TYPE INTEGER[] USING '{}';
ALTER TABLE fts_more RENAME COLUMN lexemes TO words;
ALTER TABLE fts_more ALTER COLUMN words TYPE INTEGER[] USING '{}';
