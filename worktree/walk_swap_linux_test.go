package worktree

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A walk of one folder (Under) while that folder and a link to elsewhere
// trade places, over and over: whatever it finds, reading it never reads
// outside the root.
func TestWalk_UnderSwapRace(t *testing.T) {
	root, outside := vaultAndOutside(t, map[string]string{
		"vault/sub/x.md": "inside",
		"outside/x.md":   "secret",
	})
	if err := os.Symlink(outside, filepath.Join(root, "alt")); err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, "sub"), unix.AT_FDCWD, filepath.Join(root, "alt"), unix.RENAME_EXCHANGE)
		}
	}()
	defer func() { close(stop); <-done }()
	reads := 0
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		files, _, err := walkFiles(root, &WalkOptions{Under: "sub"})
		if err != nil {
			continue
		}
		for _, f := range files {
			for range 20 {
				data, err := ReadFile(f, DefaultMaxFileSize)
				if err == nil {
					reads++
				}
				if string(data) == "secret" {
					t.Fatalf("read %s from outside the root", f.Path)
				}
			}
		}
	}
	t.Logf("%d reads", reads)
}

// A FIFO put where a walked file was (itself, or through a folder on the
// way swapped for a link) does not make the read wait for a writer.
func TestReadFile_FIFO(t *testing.T) {
	root, outside := vaultAndOutside(t, map[string]string{
		"vault/a/x.md": "inside",
		"vault/b/y.md": "inside",
	})
	if err := unix.Mkfifo(filepath.Join(outside, "x.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, _, err := walkFiles(root, nil)
	if err != nil || len(files) != 2 {
		t.Fatalf("walk = %+v, %v", files, err)
	}
	swapForLink(t, filepath.Join(root, "a"), outside)
	if err := os.Remove(filepath.Join(root, "b", "y.md")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(root, "b", "y.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(f, DefaultMaxFileSize); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("ReadFile(%s) of a FIFO: no error", f.Path)
			}
		case <-time.After(5 * time.Second):
			if w, err := os.OpenFile(f.Abs, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
				w.Close() // let it go
			}
			t.Fatalf("ReadFile(%s) waits on a FIFO", f.Path)
		}
	}
}
