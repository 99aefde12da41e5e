-- A link to a name many files share keeps at most ten of them as its
-- candidates and counts the rest (markdown.MaxCandidates), and lint names
-- at most ten of the pages sharing a page's title, alias or id: rows
-- written before kept every one, in the link's detail and in lint's
-- messages. The index is emptied so that opening the vault rebuilds it,
-- rather than keep those rows (and a deep check that finds them unlike a
-- rebuild's) until cairn reindex.

-- Ids stay unused once used, as a full build's clearing keeps them.
UPDATE file_ids SET last = greatest(last, (SELECT max(id) FROM files));
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
