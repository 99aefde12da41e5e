-- How many pages of the full text hold each word, kept as pages change
-- (fts_vocab, FTS5's own vocabulary table, counts them by reading every
-- page that holds the word: 1.3 ms for a word in a third of 100k pages,
-- on every search of it). A search's score weighs its words by these
-- counts; a full build fills the table from fts_vocab, each update adds
-- what it changed, and a word no page holds any more has no row.

CREATE TABLE fts_words (
    word  TEXT PRIMARY KEY,
    pages INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO fts_words (word, pages) SELECT term, doc FROM fts_vocab WHERE doc > 0;
