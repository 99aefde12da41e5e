-- A cairn from before migration 0014 still opens a vault that has it, and
-- its full-text writes leave a page's initials NULL (its own index
-- rebuild, all of them): a search that checked them would miss that page.
-- A page without initials now has an empty bitmap, never NULL, and this
-- index finds the rows that lack them, so that search hands such a prefix
-- to FTS5 while any does (cairn reindex writes them again). The rows 0014
-- wrote NULL for pages without initials are made again: the index is
-- emptied here; opening the vault rebuilds it from main's head.

CREATE INDEX fts_keys_unknown_initials ON fts_keys (key) WHERE text_initials IS NULL OR title_initials IS NULL;

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
