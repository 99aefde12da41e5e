-- Queries by frontmatter field (cairn list --where 'status = done'): a row
-- for each scalar value of each page's top-level fields (each item of a
-- list), with numbers' values in num for numeric comparisons. The index
-- is emptied so that opening the vault rebuilds it with the fields.

CREATE TABLE fields (
    file  INTEGER NOT NULL,
    name  TEXT NOT NULL,
    value TEXT NOT NULL,
    num   REAL
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
INSERT INTO fts (fts) VALUES ('delete-all');
INSERT INTO fts_title (fts_title) VALUES ('delete-all');
INSERT INTO fts_short (fts_short) VALUES ('delete-all');
INSERT INTO fts_title_short (fts_title_short) VALUES ('delete-all');
DELETE FROM fts_tier;
DELETE FROM index_state;
