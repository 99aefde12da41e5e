// Package storetest is the behaviour suite every cairn storage backend must
// pass: the backend contract itself (objects, refs, compare-and-swap, tags,
// the ref log, pins, purges, transactions) and the versioned store running on
// top of it (commits, revisions, history, diffs, merges, garbage collection,
// purge, verification). A backend's tests call Run with a function that
// opens a fresh, empty backend.
package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/store"
)

// Open returns a fresh, empty backend; the suite closes it.
type Open func(t *testing.T) cairn.Backend

// Run runs the whole suite.
func Run(t *testing.T, open Open) {
	t.Run("Backend", func(t *testing.T) { RunBackend(t, open) })
	t.Run("Store", func(t *testing.T) { RunStore(t, open) })
}

// RunBackend runs the tests of the backend contract.
func RunBackend(t *testing.T, open Open) {
	setup := func(t *testing.T) cairn.Backend {
		t.Helper()
		b := open(t)
		t.Cleanup(func() { b.Close() })
		return b
	}
	t.Run("FormatVersion", func(t *testing.T) {
		b := setup(t)
		v, err := b.FormatVersion(t.Context())
		if err != nil || v != store.FormatVersion {
			t.Fatalf("FormatVersion() = %d, %v; want %d", v, err, store.FormatVersion)
		}
	})
	t.Run("Objects", func(t *testing.T) { testObjects(t, setup(t)) })
	t.Run("ObjectsByPrefix", func(t *testing.T) { testPrefix(t, setup(t)) })
	t.Run("Refs", func(t *testing.T) { testRefs(t, setup(t)) })
	t.Run("Tags", func(t *testing.T) { testTags(t, setup(t)) })
	t.Run("Rollback", func(t *testing.T) { testRollback(t, setup(t)) })
	t.Run("Pins", func(t *testing.T) { testPins(t, setup(t)) })
	t.Run("Purge", func(t *testing.T) { testBackendPurge(t, setup(t)) })
	t.Run("ConcurrentCAS", func(t *testing.T) { testConcurrentCAS(t, setup(t)) })
}

func obj(kind cairn.ObjectKind, data string) cairn.Object {
	o := cairn.Object{Kind: kind, Data: []byte(data)}
	o.Hash = cairn.HashBytes([]byte{byte(kind)}, o.Data)
	return o
}

func testObjects(t *testing.T, b cairn.Backend) {
	ctx := t.Context()
	big := strings.Repeat("the quick brown fox jumps over the lazy dog\n", 30000) // compressible, 1.3 MB
	objs := []cairn.Object{
		obj(cairn.KindBlob, ""),
		obj(cairn.KindBlob, "hello\n"),
		obj(cairn.KindNode, "\x00\x00"),
		obj(cairn.KindBlob, big),
		obj(cairn.KindBlob, "\x00\xff\xfe binary"),
	}
	if err := b.PutObjects(ctx, objs); err != nil {
		t.Fatalf("PutObjects: %v", err)
	}
	if err := b.PutObjects(ctx, objs[:2]); err != nil {
		t.Fatalf("PutObjects again (must be a no-op): %v", err)
	}
	for _, want := range objs {
		got, err := b.GetObject(ctx, want.Hash)
		if err != nil {
			t.Fatalf("GetObject(%s): %v", want.Hash.Short(), err)
		}
		if got.Kind != want.Kind || !bytes.Equal(got.Data, want.Data) || got.Data == nil {
			t.Errorf("GetObject(%s) = kind %v, %d bytes; want kind %v, %d bytes", want.Hash.Short(), got.Kind, len(got.Data), want.Kind, len(want.Data))
		}
	}
	// GetObjects reads in bulk and skips what is not there.
	missing := obj(cairn.KindBlob, "never stored")
	var mu sync.Mutex
	got := map[cairn.Hash][]byte{}
	err := b.GetObjects(ctx, []cairn.Hash{objs[3].Hash, missing.Hash, objs[1].Hash, objs[1].Hash, objs[0].Hash}, func(o cairn.Object) error {
		mu.Lock()
		defer mu.Unlock()
		got[o.Hash] = o.Data
		return nil
	})
	if err != nil {
		t.Fatalf("GetObjects: %v", err)
	}
	if len(got) != 3 || string(got[objs[3].Hash]) != big || string(got[objs[1].Hash]) != "hello\n" || got[objs[0].Hash] == nil {
		t.Errorf("GetObjects returned %d objects", len(got))
	}
	// And many at once, which backends read otherwise than a few: every
	// stored one once, the missing ones left out.
	var many []cairn.Object
	var asked []cairn.Hash
	for i := range 300 {
		o := obj(cairn.KindBlob, fmt.Sprintf("object %d of many\n", i))
		many = append(many, o)
		asked = append(asked, o.Hash, obj(cairn.KindBlob, fmt.Sprintf("missing %d", i)).Hash)
	}
	if err := b.PutObjects(ctx, many); err != nil {
		t.Fatalf("PutObjects(300): %v", err)
	}
	clear(got)
	if err := b.GetObjects(ctx, asked, func(o cairn.Object) error {
		mu.Lock()
		defer mu.Unlock()
		if _, twice := got[o.Hash]; twice {
			return fmt.Errorf("object %s returned twice", o.Hash.Short())
		}
		got[o.Hash] = o.Data
		return nil
	}); err != nil {
		t.Fatalf("GetObjects(600, half missing): %v", err)
	}
	for _, o := range many {
		if !bytes.Equal(got[o.Hash], o.Data) {
			t.Fatalf("GetObjects(600, half missing): object %s is %q, want %q", o.Hash.Short(), got[o.Hash], o.Data)
		}
	}
	if len(got) != len(many) {
		t.Errorf("GetObjects(600, half missing) returned %d objects, want %d", len(got), len(many))
	}
	// Whether many are stored, past any backend's part: each asked for
	// four times, 600 places apart, so that copies fall in different
	// parts of any size under 2,400.
	twice := slices.Concat(asked, asked, asked, asked)
	has, err := b.HasObjects(ctx, twice)
	if err != nil {
		t.Fatalf("HasObjects(2,400, half missing): %v", err)
	}
	for i, h := range twice {
		if stored := i%2 == 0; has[i] != stored {
			t.Fatalf("HasObjects(2,400, half missing): %s at %d: %v, want %v", h.Short(), i, has[i], stored)
		}
	}
	if err := b.DeleteObjects(ctx, asked); err != nil {
		t.Fatalf("DeleteObjects(600, half missing): %v", err)
	}
	boom := errors.New("stop")
	for _, hs := range [][]cairn.Hash{{objs[1].Hash}, {objs[0].Hash, objs[1].Hash, objs[3].Hash}} {
		if err := b.GetObjects(ctx, hs, func(cairn.Object) error { return boom }); !errors.Is(err, boom) {
			t.Errorf("GetObjects of %d with a failing callback: error = %v, want %v", len(hs), err, boom)
		}
	}
	if _, err := b.GetObject(ctx, missing.Hash); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("GetObject(missing) error = %v, want code %s", err, cairn.ENOTFOUND)
	}
	has, err = b.HasObjects(ctx, []cairn.Hash{objs[1].Hash, missing.Hash, objs[3].Hash, objs[1].Hash})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]bool{true, false, true, true}, has); diff != "" {
		t.Errorf("HasObjects mismatch (-want +got):\n%s", diff)
	}
	var seen []cairn.Hash
	err = b.Objects(ctx, func(o cairn.ObjectInfo) error {
		seen = append(seen, o.Hash)
		if o.Hash == objs[3].Hash && o.Size != int64(len(big)) {
			t.Errorf("Objects: size of big object = %d, want %d", o.Size, len(big))
		}
		return nil
	})
	if err != nil || len(seen) != len(objs) {
		t.Fatalf("Objects() saw %d objects, err %v; want %d", len(seen), err, len(objs))
	}
	if err := b.DeleteObjects(ctx, []cairn.Hash{objs[1].Hash, missing.Hash}); err != nil {
		t.Fatalf("DeleteObjects: %v", err)
	}
	if _, err := b.GetObject(ctx, objs[1].Hash); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("GetObject(deleted) error = %v, want code %s", err, cairn.ENOTFOUND)
	}
	if _, err := b.GetObject(ctx, objs[0].Hash); err != nil {
		t.Errorf("GetObject(kept) after DeleteObjects: %v", err)
	}
}

func testPrefix(t *testing.T, b cairn.Backend) {
	ctx := t.Context()
	var objs []cairn.Object
	for i := range 600 {
		objs = append(objs, obj(cairn.KindCommit, fmt.Sprint(i)))
	}
	objs = append(objs, obj(cairn.KindBlob, "a blob"))
	if err := b.PutObjects(ctx, objs); err != nil {
		t.Fatal(err)
	}
	target := objs[7].Hash.String()
	for _, n := range []int{64, 12, 7, 4} {
		got, err := b.ObjectsByPrefix(ctx, cairn.KindCommit, target[:n], 10)
		if err != nil {
			t.Fatalf("ObjectsByPrefix(%q): %v", target[:n], err)
		}
		if !slices.Contains(got, objs[7].Hash) {
			t.Errorf("ObjectsByPrefix(%q) = %v, want it to contain %s", target[:n], got, target)
		}
		for _, h := range got {
			if !strings.HasPrefix(h.String(), target[:n]) {
				t.Errorf("ObjectsByPrefix(%q) returned %s", target[:n], h)
			}
		}
	}
	// With 600 objects, some 2-digit prefix is shared by several.
	count := map[string]int{}
	for _, o := range objs[:600] {
		count[o.Hash.String()[:2]]++
	}
	for p, n := range count {
		got, err := b.ObjectsByPrefix(ctx, cairn.KindCommit, p, 100)
		if err != nil || len(got) != n {
			t.Fatalf("ObjectsByPrefix(%q) = %d hashes, %v; want %d", p, len(got), err, n)
		}
		got, _ = b.ObjectsByPrefix(ctx, cairn.KindCommit, p[:1], 1000)
		want := 0
		for q, m := range count {
			if q[0] == p[0] {
				want += m
			}
		}
		if len(got) != want {
			t.Fatalf("ObjectsByPrefix(%q) = %d hashes, want %d", p[:1], len(got), want)
		}
		break
	}
	blob := objs[600].Hash.String()
	if got, _ := b.ObjectsByPrefix(ctx, cairn.KindCommit, blob[:16], 10); len(got) != 0 {
		t.Errorf("ObjectsByPrefix(commit, blob prefix) = %v, want none", got)
	}
	if got, err := b.ObjectsByPrefix(ctx, cairn.KindCommit, "ff", 1000); err != nil || len(got) != count["ff"] {
		t.Errorf("ObjectsByPrefix(ff) = %d, %v; want %d", len(got), err, count["ff"])
	}
	if _, err := b.ObjectsByPrefix(ctx, cairn.KindCommit, "xyz", 10); cairn.ErrorCode(err) != cairn.EINVALID {
		t.Errorf("ObjectsByPrefix(xyz) error = %v, want code %s", err, cairn.EINVALID)
	}
}

func update(t *testing.T, b cairn.Backend, u cairn.RefUpdate) error {
	t.Helper()
	return b.Update(t.Context(), func(tx cairn.Tx) error { return tx.UpdateRef(t.Context(), u) })
}

func testRefs(t *testing.T, b cairn.Backend) {
	ctx := t.Context()
	h1, h2, h3 := obj(3, "1").Hash, obj(3, "2").Hash, obj(3, "3").Hash
	alice := cairn.User("alice")
	if err := update(t, b, cairn.RefUpdate{Name: "heads/main", Kind: cairn.RefBranch, New: h1, Principal: alice, Message: "create"}); err != nil {
		t.Fatalf("create branch: %v", err)
	}
	if err := update(t, b, cairn.RefUpdate{Name: "heads/main", Kind: cairn.RefBranch, New: h2, Principal: alice}); cairn.ErrorCode(err) != cairn.ECONFLICT {
		t.Errorf("create existing branch: error = %v, want code %s", err, cairn.ECONFLICT)
	}
	if err := update(t, b, cairn.RefUpdate{Name: "heads/main", Kind: cairn.RefBranch, Old: h1, New: h2, Principal: alice, Message: "move"}); err != nil {
		t.Fatalf("move branch: %v", err)
	}
	err := update(t, b, cairn.RefUpdate{Name: "heads/main", Kind: cairn.RefBranch, Old: h1, New: h3, Principal: alice})
	if cairn.ErrorCode(err) != cairn.ECONFLICT {
		t.Fatalf("stale compare-and-swap: error = %v, want code %s", err, cairn.ECONFLICT)
	}
	if r, err := b.Ref(ctx, "heads/main"); err != nil || r.Hash != h2 || r.Kind != cairn.RefBranch {
		t.Fatalf("Ref(main) after stale CAS = %v, %v; want %s", r.Hash.Short(), err, h2.Short())
	}
	if err := update(t, b, cairn.RefUpdate{Name: "heads/gone", Kind: cairn.RefBranch, Old: h1, New: h2, Principal: alice}); cairn.ErrorCode(err) != cairn.ECONFLICT {
		t.Errorf("move missing branch: error = %v, want code %s", err, cairn.ECONFLICT)
	}
	if err := update(t, b, cairn.RefUpdate{Name: "heads/b/1", Kind: cairn.RefBranch, New: h3, Principal: alice}); err != nil {
		t.Fatal(err)
	}
	refs, err := b.Refs(ctx, "heads/")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range refs {
		names = append(names, r.Name)
	}
	if diff := cmp.Diff([]string{"heads/b/1", "heads/main"}, names); diff != "" {
		t.Errorf("Refs(heads/) mismatch (-want +got):\n%s", diff)
	}
	if err := update(t, b, cairn.RefUpdate{Name: "heads/b/1", Kind: cairn.RefBranch, Old: h3, Principal: alice, Message: "delete"}); err != nil {
		t.Fatalf("delete branch: %v", err)
	}
	if _, err := b.Ref(ctx, "heads/b/1"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("Ref(deleted) error = %v, want code %s", err, cairn.ENOTFOUND)
	}
	log, err := b.RefLog(ctx, "heads/main", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].New != h2 || log[0].Old != h1 || log[1].New != h1 || !log[1].Old.IsZero() || log[0].Principal != alice || log[0].Message != "move" {
		t.Errorf("RefLog(main) = %+v, want [move h1→h2, create →h1]", log)
	}
	all, err := b.RefLog(ctx, "", time.Time{})
	if err != nil || len(all) != 4 {
		t.Errorf("RefLog(all) = %d entries, %v; want 4", len(all), err)
	}
	recent, err := b.RefLog(ctx, "", time.Now().Add(time.Hour))
	if err != nil || len(recent) != 0 {
		t.Errorf("RefLog(since the future) = %d entries, %v; want 0", len(recent), err)
	}
}

func testTags(t *testing.T, b cairn.Backend) {
	h1, h2 := obj(3, "1").Hash, obj(3, "2").Hash
	p := cairn.PrincipalSystem
	if err := update(t, b, cairn.RefUpdate{Name: "tags/v1", Kind: cairn.RefTag, New: h1, Principal: p}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []cairn.RefUpdate{
		{Name: "tags/v1", Kind: cairn.RefTag, Old: h1, New: h2, Principal: p},
		{Name: "tags/v1", Kind: cairn.RefTag, Old: h1, Principal: p},
		{Name: "tags/v1", Kind: cairn.RefTag, New: h2, Principal: p},
	} {
		if err := update(t, b, u); cairn.ErrorCode(err) != cairn.ECONFLICT {
			t.Errorf("UpdateRef(%+v) on a tag: error = %v, want code %s", u, err, cairn.ECONFLICT)
		}
	}
	if r, _ := b.Ref(t.Context(), "tags/v1"); r.Hash != h1 {
		t.Errorf("tag moved to %s", r.Hash.Short())
	}
}

func testRollback(t *testing.T, b cairn.Backend) {
	ctx := t.Context()
	o := obj(cairn.KindBlob, "rolled back")
	boom := errors.New("boom")
	err := b.Update(ctx, func(tx cairn.Tx) error {
		if err := tx.PutObjects(ctx, []cairn.Object{o}); err != nil {
			return err
		}
		if err := tx.UpdateRef(ctx, cairn.RefUpdate{Name: "heads/x", Kind: cairn.RefBranch, New: o.Hash, Principal: cairn.PrincipalSystem}); err != nil {
			return err
		}
		if r, err := tx.Ref(ctx, "heads/x"); err != nil || r.Hash != o.Hash {
			t.Errorf("Tx.Ref inside the transaction = %v, %v", r.Hash.Short(), err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update error = %v, want %v", err, boom)
	}
	if _, err := b.GetObject(ctx, o.Hash); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("object written in a rolled-back transaction: GetObject error = %v", err)
	}
	if _, err := b.Ref(ctx, "heads/x"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("ref written in a rolled-back transaction: Ref error = %v", err)
	}
	if log, _ := b.RefLog(ctx, "", time.Time{}); len(log) != 0 {
		t.Errorf("ref log after rollback = %v, want empty", log)
	}
}

func testPins(t *testing.T, b cairn.Backend) {
	ctx := t.Context()
	now := time.Now()
	h1, h2 := obj(3, "1").Hash, obj(3, "2").Hash
	err := b.Update(ctx, func(tx cairn.Tx) error {
		for _, p := range []cairn.Pin{
			{Hash: h1, Reason: "forever", Created: now},
			{Hash: h2, Reason: "expired", Created: now, Expires: now.Add(-time.Minute)},
			{Hash: h2, Reason: "review 7", Created: now, Expires: now.Add(time.Hour)},
		} {
			if err := tx.SetPin(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pins, err := b.Pins(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, p := range pins {
		reasons = append(reasons, p.Reason)
	}
	slices.Sort(reasons)
	if diff := cmp.Diff([]string{"forever", "review 7"}, reasons); diff != "" {
		t.Errorf("Pins mismatch (-want +got):\n%s", diff)
	}
	if err := b.Update(ctx, func(tx cairn.Tx) error { return tx.DeletePin(ctx, h1, "forever") }); err != nil {
		t.Fatal(err)
	}
	if pins, _ := b.Pins(ctx, now); len(pins) != 1 {
		t.Errorf("Pins after delete = %v, want one", pins)
	}
}

func testBackendPurge(t *testing.T, b cairn.Backend) {
	ctx := t.Context()
	secret := obj(cairn.KindBlob, "API_KEY=sk-live-1234567890")
	if err := b.PutObjects(ctx, []cairn.Object{secret}); err != nil {
		t.Fatal(err)
	}
	p := cairn.Purge{Hash: secret.Hash, Principal: cairn.User("alice"), Reason: "leaked key", Time: time.Now().UTC()}
	if err := b.Purge(ctx, p); err != nil {
		t.Fatalf("Purge: %v", err)
	}
	_, err := b.GetObject(ctx, secret.Hash)
	if !errors.Is(err, cairn.ErrPurged) || cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Fatalf("GetObject(purged) error = %v, want ErrPurged", err)
	}
	if !strings.Contains(err.Error(), "purged") || !strings.Contains(err.Error(), "leaked key") {
		t.Errorf("GetObject(purged) error %q should say it was purged and why", err)
	}
	if err := b.GetObjects(ctx, []cairn.Hash{secret.Hash}, func(cairn.Object) error { return errors.New("purged object returned") }); err != nil {
		t.Errorf("GetObjects(purged): %v", err)
	}
	// Read with others, which backends may read otherwise than one alone.
	kept := obj(cairn.KindBlob, "kept beside the purged one")
	if err := b.PutObjects(ctx, []cairn.Object{kept}); err != nil {
		t.Fatal(err)
	}
	var got []cairn.Hash
	if err := b.GetObjects(ctx, []cairn.Hash{secret.Hash, kept.Hash}, func(o cairn.Object) error {
		got = append(got, o.Hash)
		return nil
	}); err != nil || len(got) != 1 || got[0] != kept.Hash {
		t.Errorf("GetObjects(purged, kept) = %v, %v; want the kept one alone", got, err)
	}
	if has, _ := b.HasObjects(ctx, []cairn.Hash{secret.Hash}); !has[0] {
		t.Errorf("HasObjects(purged) = false; the hash must stay")
	}
	if err := b.Purge(ctx, p); err != nil {
		t.Errorf("Purge twice: %v", err)
	}
	purges, err := b.Purges(ctx)
	if err != nil || len(purges) != 1 || purges[0].Reason != "leaked key" || purges[0].Principal != p.Principal {
		t.Errorf("Purges() = %+v, %v", purges, err)
	}
	if err := b.Purge(ctx, cairn.Purge{Hash: obj(1, "nope").Hash, Principal: p.Principal, Reason: "x", Time: p.Time}); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("Purge(missing) error = %v, want code %s", err, cairn.ENOTFOUND)
	}
}

// testConcurrentCAS has several goroutines race to move one branch from
// the same head, round after round: exactly one wins each round and the
// others get a conflict.
func testConcurrentCAS(t *testing.T, b cairn.Backend) {
	ctx := t.Context()
	const workers, rounds = 6, 20
	head := obj(3, "start").Hash
	if err := update(t, b, cairn.RefUpdate{Name: "heads/main", Kind: cairn.RefBranch, New: head, Principal: cairn.PrincipalSystem}); err != nil {
		t.Fatal(err)
	}
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make([]error, workers)
		start := make(chan struct{})
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				next := obj(3, fmt.Sprintf("%d/%d", round, w)).Hash
				errs[w] = b.Update(ctx, func(tx cairn.Tx) error {
					return tx.UpdateRef(ctx, cairn.RefUpdate{Name: "heads/main", Kind: cairn.RefBranch, Old: head, New: next, Principal: cairn.Job(fmt.Sprint(w))})
				})
			}()
		}
		close(start)
		wg.Wait()
		won := -1
		for w, err := range errs {
			switch cairn.ErrorCode(err) {
			case "":
				if won >= 0 {
					t.Fatalf("round %d: workers %d and %d both won", round, won, w)
				}
				won = w
			case cairn.ECONFLICT:
			default:
				t.Fatalf("round %d: worker %d: %v", round, w, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: nobody won", round)
		}
		r, err := b.Ref(ctx, "heads/main")
		if err != nil || r.Hash != obj(3, fmt.Sprintf("%d/%d", round, won)).Hash {
			t.Fatalf("round %d: head = %v, %v; want the winner's", round, r.Hash.Short(), err)
		}
		head = r.Hash
	}
	log, _ := b.RefLog(ctx, "heads/main", time.Time{})
	if len(log) != rounds+1 {
		t.Errorf("ref log has %d entries, want %d", len(log), rounds+1)
	}
}
