-- Links to files that share a name resolve as Obsidian resolves them (the
-- one in the linking page's folder, else the shortest path), heading links
-- leave out punctuation as Obsidian's do, a block id may follow an embed,
-- and cairn.yaml makes lint strict only with lint.strict. Every derived row
-- may differ, so the index is emptied here; opening the vault rebuilds it
-- from main's head.

DELETE FROM files;
DELETE FROM keys;
DELETE FROM links;
DELETE FROM link_keys;
DELETE FROM cites;
DELETE FROM findings;
INSERT INTO fts (fts) VALUES ('delete-all');
INSERT INTO fts_title (fts_title) VALUES ('delete-all');
DELETE FROM index_state;
