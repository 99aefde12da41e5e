-- Queries by frontmatter field (cairn list --where 'status = done'): a row
-- for each scalar value of each page's top-level fields (each item of a
-- list), with numbers' values in num for numeric comparisons. Values
-- compare byte by byte (COLLATE "C"), as on SQLite. The index is emptied
-- so that opening the vault rebuilds it with the fields.

CREATE TABLE fields (
    file  BIGINT NOT NULL,
    name  TEXT NOT NULL,
    value TEXT COLLATE "C" NOT NULL,
    num   DOUBLE PRECISION
);
CREATE INDEX fields_name_value ON fields (name, value);
CREATE INDEX fields_name_num ON fields (name, num) WHERE num IS NOT NULL;
CREATE INDEX fields_file ON fields (file);

DELETE FROM files;
DELETE FROM keys;
DELETE FROM links;
DELETE FROM link_keys;
DELETE FROM cites;
DELETE FROM findings;
DELETE FROM fts;
DELETE FROM fts_short;
DELETE FROM fts_mid;
DELETE FROM fts_more;
DELETE FROM fts_vocab;
UPDATE fts_stats SET pages = 0, words = 0, more = 0, short_words = -1, short = 0, mid_words = -1, mid = 0;
DELETE FROM index_state;
