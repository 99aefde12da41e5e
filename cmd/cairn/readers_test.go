package main

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// TestReadersNeverWait holds the vault's write lock, as a long import does,
// and runs every read command with a busy timeout of ten minutes: each
// finishes without waiting for the lock. (The minute each is given is a
// bound on a hang, not a timing assertion.)
func TestReadersNeverWait(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	root := t.TempDir()
	vault := filepath.Join(root, "vault")
	writeFiles(t, vault, map[string]string{
		"index.md":   "# Home\n\n- [[ideas]]\n",
		"ideas.md":   "---\ntitle: Ideas\n---\n# Ideas\n\nMovable type. [[index]]\n",
		"raw/src.md": "a source\n",
	})
	must(t, run(t, vault, nil, "init"), "init")
	writeFiles(t, vault, map[string]string{"ideas.md": "---\ntitle: Ideas\n---\n# Ideas\n\nMovable type, again. [[index]]\n"})
	must(t, run(t, vault, nil, "commit", "-m", "again"), "commit")

	holdWriteLock(t, vault)
	for _, args := range [][]string{
		{"status"}, {"log"}, {"log", "--path", "ideas.md"}, {"show", "main:ideas.md"}, {"show", "main"},
		{"diff", "main~1", "main"}, {"search", "movable"}, {"backlinks", "index"}, {"links", "ideas"},
		{"lint"}, {"branch"}, {"tag"}, {"worktree", "list"}, {"sources"}, {"jobs"}, {"review", "list"},
		{"settings"},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		cmd := exec.CommandContext(ctx, cairnBin(t), args...)
		cmd.Dir = vault
		cmd.Env = append(os.Environ(), "CAIRN_USER=tester", "CAIRN_BUSY_TIMEOUT_MS=600000")
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Errorf("cairn %v waited for the write lock (killed after a minute):\n%s", args, out)
		} else if err != nil {
			t.Errorf("cairn %v while another process writes: %v\n%s", args, err, out)
		}
		cancel()
	}
}

// holdWriteLock takes the vault's write lock, as another process's long
// write would, until the test ends or the transaction is rolled back.
func holdWriteLock(t *testing.T, vault string) *sql.Tx {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(vault, ".cairn", "cairn.db")+"?_txlock=immediate&_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	if _, err := tx.Exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('test-writer', 'holding the lock')`); err != nil {
		t.Fatal(err)
	}
	return tx
}
