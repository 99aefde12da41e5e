package gitio

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"cairn"
	"cairn/store"
)

// DefaultMaxFileSize is the largest file ImportHistory takes by default.
const DefaultMaxFileSize = 64 << 20

// gitHint is the hint of every error about dir not being a usable repository.
const gitHint = "cairn import --history needs a git repository you own: a folder with a .git folder (or a .git file or link naming one), or a bare repository."

// ImportOptions adjust ImportHistory. The zero value gives the defaults.
type ImportOptions struct {
	// Branch is the cairn branch to create. It must not exist yet.
	// Default "main".
	Branch string
	// Ref is the git revision whose history is imported. Default "HEAD".
	Ref string
	// Principal maps a git author to the principal of the cairn commit.
	// Default DefaultPrincipal. It must return a valid principal.
	Principal func(name, email string) cairn.Principal
	// Skip leaves out the paths it returns true for (the caller's ignore
	// rules), silently and in every commit; it gets git's path, byte for
	// byte. Default: nothing is left out but what a vault cannot hold.
	Skip func(path string) bool
	// Progress, when set, is called after each imported commit.
	Progress func(done, total int)
	// MaxFileSize is the size above which a file is left out and listed in
	// Skipped. Default DefaultMaxFileSize (64 MiB).
	MaxFileSize int64
}

// ImportResult reports an import.
type ImportResult struct {
	// Head is the last cairn commit, where the branch now points.
	Head cairn.Hash
	// Commits is the number of git commits imported.
	Commits int
	// Skipped lists the files left out, each once per path and kind, at the
	// first commit that had it.
	Skipped []Skipped
}

// Skipped is a file of the git history that the vault does not hold.
type Skipped struct {
	Commit string   // the git commit that added or changed it
	Path   string   // git's path, byte for byte
	Kind   SkipKind // why, for programs
	Reason string   // why, for people
}

// SkipKind says why a file was left out of an import.
type SkipKind string

// Kinds of skipped files.
const (
	SkipInvalidPath SkipKind = "invalid-path" // cairn.CleanPath refuses the name (.cairn/, .git, control characters, not UTF-8, ...)
	SkipCollision   SkipKind = "collision"    // it differs only in case (or Unicode normalization) from a file or folder in the vault
	SkipSymlink     SkipKind = "symlink"      // a symbolic link
	SkipSubmodule   SkipKind = "submodule"    // a gitlink to another repository's commit
	SkipTooLarge    SkipKind = "too-large"    // larger than MaxFileSize
	SkipSpecial     SkipKind = "special"      // a tree entry of a kind git itself does not write
)

// ImportHistory reads the first-parent history of opts.Ref in the git
// repository at dir and replays it, oldest first, as commits on a new
// branch of s. Each git commit becomes one cairn commit (even when nothing
// the vault holds changed) with the git commit's message, its author time,
// the principal opts.Principal gives for its author, and the metadata
// MetaCommit (the git hash), MetaAuthor and MetaCommitter (the author and
// committer as git wrote them: "Name <email> <seconds> <±hhmm>"), which
// ExportGit gives back to git. A merge commit imports as its change against
// its first parent: the side branches it merged are not imported as
// commits of their own. The tree of each cairn commit is the git commit's
// tree minus the files the vault cannot hold (listed in the result's
// Skipped) and those opts.Skip leaves out. Of two files that collide, the
// one already in the vault, or else the first in git's path order, stays;
// the other joins the vault once the first leaves it.
//
// ImportHistory never writes to dir. Errors: dir does not exist
// (ENOTFOUND) or is not a git repository (EINVALID), opts.Ref names no
// commit or the repository has none (ENOTFOUND), the branch exists
// (ECONFLICT), opts.Principal gives an invalid principal (EINVALID). When
// the import fails part way, the branch it created is removed again;
// objects already written stay until garbage collection.
func ImportHistory(ctx context.Context, s *store.Store, dir string, opts *ImportOptions) (*ImportResult, error) {
	var o ImportOptions
	if opts != nil {
		o = *opts
	}
	o.Branch = cmp.Or(o.Branch, "main")
	o.Ref = cmp.Or(o.Ref, "HEAD")
	if o.Principal == nil {
		o.Principal = DefaultPrincipal
	}
	o.MaxFileSize = cmp.Or(o.MaxFileSize, DefaultMaxFileSize)
	res, err := importHistory(ctx, s, dir, &o)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", dir, err)
	}
	return res, nil
}

func importHistory(ctx context.Context, s *store.Store, dir string, o *ImportOptions) (*ImportResult, error) {
	if err := store.ValidateRefName(o.Branch); err != nil {
		return nil, err
	}
	if strings.HasPrefix(o.Ref, "-") {
		return nil, cairn.Errorf(cairn.EINVALID, "git ref %q starts with '-'", o.Ref)
	}
	if _, err := s.Head(ctx, o.Branch); err == nil {
		return nil, cairn.Errorf(cairn.ECONFLICT, "branch %s already exists", o.Branch).
			WithHint("Import into a branch that does not exist yet.")
	} else if cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return nil, err
	}
	sb, err := newSandbox()
	if err != nil {
		return nil, err
	}
	defer sb.Close()
	g, head, err := openRepo(ctx, sb, dir, o.Ref)
	if err != nil {
		return nil, err
	}
	out, err := g.run(ctx, "rev-list", "--first-parent", "--reverse", head, "--")
	if err != nil {
		return nil, err
	}
	ids := strings.Fields(string(out))

	// Three long-lived processes feed the import; whatever happens, they
	// end with it.
	cat, err := g.startCatFile(ctx)
	if err != nil {
		return nil, err
	}
	defer cat.p.kill()
	log, err := g.startLog(ctx, head)
	if err != nil {
		return nil, err
	}
	defer log.p.kill()
	diffs, err := g.startDiffTree(ctx, ids)
	if err != nil {
		return nil, err
	}
	defer diffs.p.kill()

	im := newImporter(s, o, cat)
	fail := func(err error) (*ImportResult, error) {
		if im.head.IsZero() {
			return nil, err
		}
		// Leave the store as it was: the branch did not exist before.
		derr := s.SetBranch(context.WithoutCancel(ctx), o.Branch, im.head, cairn.Hash{}, cairn.PrincipalSystem, "remove failed git import")
		if derr != nil {
			derr = fmt.Errorf("remove branch %s: %w", o.Branch, derr)
		}
		return nil, errors.Join(err, derr)
	}
	for i, id := range ids {
		info, err := log.next()
		if err != nil {
			return fail(err)
		}
		if info.id != id {
			return fail(fmt.Errorf("git log gave commit %s where git rev-list gave %s", info.id, id))
		}
		raw, err := diffs.changes(id)
		if err != nil {
			return fail(err)
		}
		if err := im.commit(ctx, info, raw); err != nil {
			return fail(fmt.Errorf("commit %s: %w", id, err))
		}
		if o.Progress != nil {
			o.Progress(i+1, len(ids))
		}
	}
	for _, wait := range []func() error{log.wait, diffs.wait, cat.close} {
		if err := wait(); err != nil {
			return fail(err)
		}
	}
	im.res.Head = im.head
	im.res.Commits = len(ids)
	return &im.res, nil
}

// openRepo checks that dir is a git repository, resolves ref in it to a
// commit id, and returns the repository the import reads it through: a git
// folder of the sandbox's own, whose only tie to dir's is that it borrows
// its objects (an alternate object store) and its list of shallow commits.
// Only the two rev-parse commands that find the repository and resolve
// ref run in dir, where git reads its configuration; every other command
// runs where that configuration, its hooks and its index are not.
func openRepo(ctx context.Context, sb *sandbox, dir, ref string) (*repo, string, error) {
	if fi, err := os.Stat(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, "", cairn.Errorf(cairn.ENOTFOUND, "no such folder").WithHint(gitHint)
		}
		return nil, "", err
	} else if !fi.IsDir() {
		return nil, "", cairn.Errorf(cairn.EINVALID, "not a folder").WithHint(gitHint)
	}
	g, err := sb.repo(dir)
	if err != nil {
		return nil, "", err
	}
	out, err := g.run(ctx, "rev-parse", "--path-format=absolute", "--git-path", "objects", "--git-path", "shallow", "--show-object-format")
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", err
		}
		return nil, "", (&cairn.Error{Code: cairn.EINVALID, Message: "not a git repository", Err: err}).WithHint(gitHint)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 3 || !filepath.IsAbs(lines[0]) || !filepath.IsAbs(lines[1]) {
		return nil, "", cairn.Errorf(cairn.EINVALID, "git rev-parse described the repository as %q", out).
			WithHint("A git folder whose path holds a newline cannot be imported; move the repository.")
	}
	objects, shallow, format := lines[0], lines[1], lines[2]
	out, err = g.run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		if exitCode(err) != 1 {
			return nil, "", err
		}
		if ref == "HEAD" {
			return nil, "", cairn.Errorf(cairn.ENOTFOUND, "the git repository has no commits (HEAD names none)").
				WithHint("Commit in git first, or import the folder without its history.")
		}
		return nil, "", cairn.Errorf(cairn.ENOTFOUND, "git ref %q names no commit", ref).
			WithHint("Name a branch, tag or commit of the repository: git -C DIR branch --all")
	}
	head := strings.TrimSpace(string(out))
	gitDir, err := readerDir(sb, objects, shallow, format)
	if err != nil {
		return nil, "", err
	}
	r, err := sb.repo(gitDir, "GIT_DIR="+gitDir)
	if err != nil {
		return nil, "", err
	}
	return r, head, nil
}

// readerDir makes the sandbox's git folder that reads another repository's
// objects: a bare repository with the same object format, no refs, no
// hooks, and configuration of its own, whose object store has the other's
// as its alternate and whose shallow list is a copy of the other's.
func readerDir(sb *sandbox, objects, shallow, format string) (string, error) {
	dir := filepath.Join(sb.root, "repo")
	config := "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
	switch format {
	case "sha1":
	case "sha256":
		config = "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectFormat = sha256\n"
	default:
		return "", cairn.Errorf(cairn.EINVALID, "the repository's object format %q is not one git names", format)
	}
	files := map[string]string{
		"HEAD":                    "ref: refs/heads/main\n",
		"config":                  config,
		"objects/info/alternates": objects + "\n",
	}
	switch data, err := os.ReadFile(shallow); {
	case err == nil:
		files["shallow"] = string(data)
	case !errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("read the list of shallow commits: %w", err)
	}
	for _, d := range []string{"refs", "objects/info"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return "", fmt.Errorf("make git's reading repository: %w", err)
		}
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			return "", fmt.Errorf("make git's reading repository: %w", err)
		}
	}
	return dir, nil
}

// DefaultPrincipal maps a git author to user:<name>, the name reduced to
// the characters a principal name allows: accents are dropped, and every
// run of other characters becomes one '.' ("Ada Lovelace" gives
// user:Ada.Lovelace, "José" user:Jose). When nothing is left of the name it
// tries the email address the same way, and gives user:git when that fails
// too.
func DefaultPrincipal(name, email string) cairn.Principal {
	for _, s := range []string{name, email} {
		if n := principalName(s); n != "" {
			return cairn.User(n)
		}
	}
	return cairn.User("git")
}

// principalName reduces s to 1–128 bytes of the characters a principal
// name may hold, or "".
func principalName(s string) string {
	var b strings.Builder
	dot := false
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
			// A combining accent: drop it, keep its letter.
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._@+-", r)):
			b.WriteRune(r)
			dot = false
		default:
			if !dot && b.Len() > 0 {
				b.WriteByte('.')
			}
			dot = true
		}
	}
	n := b.String()
	if len(n) > 128 {
		n = n[:128]
	}
	return strings.Trim(n, ".")
}
