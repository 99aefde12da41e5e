package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestExitCodes checks the exit codes scripts rely on: 2 for bad input, 1
// for a refusal, 3 for an internal error (here a database missing one of
// its tables), with a hint to run cairn doctor.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	cairn := func(args ...string) (int, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := Main(t.Context(), args, strings.NewReader(""), &stdout, &stderr)
		return code, stderr.String()
	}
	if code, errs := cairn("init", "v"); code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, errs)
	}
	if code, errs := cairn("-C", "v", "show", "nothing.md"); code != exitUsage {
		t.Errorf("show of a missing page: exit %d, want %d\n%s", code, exitUsage, errs)
	}
	if code, errs := cairn("-C", "v", "import", filepath.Join(dir, "no-such-folder")); code != exitUsage {
		t.Errorf("import of a missing folder: exit %d, want %d\n%s", code, exitUsage, errs)
	}
	if code, errs := cairn("-C", "v", "status", filepath.Join(dir, "elsewhere")); code != exitUsage {
		t.Errorf("status of a path outside the working tree: exit %d, want %d\n%s", code, exitUsage, errs)
	}

	db, err := sql.Open("sqlite", filepath.Join(dir, "v", ".cairn", "cairn.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP TABLE proposals`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, errs := cairn("-C", "v", "review", "list")
	if code != exitBug || !strings.Contains(errs, "cairn doctor") {
		t.Errorf("review list on a damaged database: exit %d, want %d with a hint naming cairn doctor\n%s", code, exitBug, errs)
	}
	var stdout, stderr bytes.Buffer
	Main(t.Context(), []string{"-C", "v", "--json", "review", "list"}, strings.NewReader(""), &stdout, &stderr)
	var out struct {
		Error struct{ Code, Hint string }
	}
	if err := json.Unmarshal(stderr.Bytes(), &out); err != nil || out.Error.Code != "internal" || out.Error.Hint == "" {
		t.Errorf("--json error on a damaged database: %v\n%s", err, stderr.String())
	}
}

// TestLogFlags checks --log-level and --log-format: bad values are usage
// errors; a good one is accepted by every command.
func TestLogFlags(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--log-level", "loud", "status"}, exitUsage},
		{[]string{"--log-level", "info+4", "status"}, exitUsage},
		{[]string{"--log-format", "xml", "status"}, exitUsage},
		{[]string{"--log-level", "debug", "--log-format", "json", "init", "v"}, exitOK},
	} {
		var stdout, stderr bytes.Buffer
		if code := Main(t.Context(), tc.args, strings.NewReader(""), &stdout, &stderr); code != tc.want {
			t.Errorf("cairn %v: exit %d, want %d\n%s", tc.args, code, tc.want, stderr.String())
		}
	}
}
