-- A link to a name many files share keeps at most ten of them as its
-- candidates and counts the rest (markdown.MaxCandidates), and lint names
-- at most ten of the pages sharing a page's title, alias or id: rows
-- written before kept every one, in the link's detail and in lint's
-- messages. The index is emptied so that opening the vault rebuilds it,
-- rather than keep those rows (and a deep check that finds them unlike a
-- rebuild's) until cairn reindex.

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
