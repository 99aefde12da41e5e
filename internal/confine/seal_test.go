package confine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn/sqlite"
)

// TestRun_Seal runs unconfined agents beside a real SQLite database that
// the test writes and checkpoints while they run: an agent that leaves the
// sealed folder alone passes, one that changes a file there, replaces a
// database file, appends to the database or cuts its log short is caught.
func TestRun_Seal(t *testing.T) {
	t.Setenv("CAIRN_LANDLOCK", "off")
	for _, tt := range []struct {
		name   string
		tamper string
		want   []string // relative to the sealed folder
	}{
		{"Clean", "cat db > /dev/null", nil},
		{"NewFile", "echo x > evil", []string{"evil"}},
		{"ChangeFile", "echo x >> notes.txt", []string{"notes.txt"}},
		{"AppendDB", "printf garbage >> db", []string{"db"}},
		{"ReplaceShm", "cp db-shm shm.new && mv shm.new db-shm", []string{"db-shm"}},
		{"RemoveWAL", "rm db-wal", []string{"db-wal"}},
		{"TruncateWAL", `truncate -s $(( $(stat -c %s db-wal) / 2 )) db-wal`, []string{"db-wal"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := setup(t)
			sealed := t.TempDir()
			if err := os.WriteFile(filepath.Join(sealed, "notes.txt"), []byte("keep\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(sealed, "db")
			db, err := sqlite.Open(t.Context(), path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			rows := 0
			write := func(n int) {
				for range n {
					rows++
					if _, err := db.Write().ExecContext(context.Background(), `INSERT INTO meta (key, value) VALUES (?, ?)`,
						fmt.Sprint("k", rows), strings.Repeat("v", 1000)); err != nil {
						t.Error(err)
					}
				}
			}
			write(200)
			// While the agent waits, the database is written, and its log
			// truncated by a checkpoint, as other processes do.
			spec.Output = func(stream, line string) {
				if line == "waiting" {
					write(100)
					if err := db.Checkpoint(context.Background()); err != nil {
						t.Error(err)
					}
					write(100)
					if err := os.WriteFile(filepath.Join(spec.Dir, "go"), nil, 0o644); err != nil {
						t.Error(err)
					}
				}
			}
			spec.Env = []string{"SEALED=" + sealed}
			script(t, &spec, `echo waiting
while [ ! -e go ]; do sleep 0.01; done
cd "$SEALED" && `+tt.tamper+`
`)
			spec.Seal = []string{sealed}
			spec.SealDB = []string{path}
			res := run(t, t.Context(), spec)

			var want []string
			for _, p := range tt.want {
				want = append(want, filepath.Join(sealed, p))
			}
			if diff := cmp.Diff(want, res.Sealed); diff != "" || res.ExitCode != 0 {
				t.Errorf("Run() exit %d; Sealed (-want +got):\n%s", res.ExitCode, diff)
			}
		})
	}
}

// TestRun_SealLandlock checks that Seal is for snapshot mode: with
// Landlock the agent cannot reach the sealed folder, and nothing is
// reported.
func TestRun_SealLandlock(t *testing.T) {
	landlock(t)
	spec := setup(t)
	sealed := t.TempDir()
	spec.Seal = []string{sealed}
	spec.Env = []string{"SEALED=" + sealed}
	script(t, &spec, `echo x > "$SEALED/evil" 2>/dev/null; exit 0`)
	res := run(t, t.Context(), spec)
	if res.Sealed != nil {
		t.Errorf("Run() = %+v, want nothing sealed reported", res)
	}
	if _, err := os.Stat(filepath.Join(sealed, "evil")); err == nil {
		t.Errorf("the agent wrote into the sealed folder")
	}
}
