package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"cairn/app"
)

// chromium returns the path of a Chromium to drive, skipping the test
// when there is none (in CI there must be: .ci/run installs it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no Chromium: in CI, .ci/run installs it (apt-get install chromium)")
	}
	t.Skip("no Chromium here: apt-get install chromium to run the browser tests")
	return ""
}

// tab is one browser tab that records what went wrong in it: console
// errors, uncaught exceptions, failed requests and answers of 400 or more.
type tab struct {
	t    *testing.T
	ctx  context.Context
	mu   sync.Mutex
	errs []string
	shot string // the folder screenshots go to
}

// newTab starts a headless Chromium (its own profile, so its own cookies)
// and returns a tab of it.
func newTab(t *testing.T, exe string) *tab {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 800), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	tb := &tab{t: t, ctx: ctx, shot: os.Getenv("CAIRN_SCREENSHOTS")}
	if tb.shot == "" {
		tb.shot = t.TempDir()
	}
	enable := func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{})
		return chromedp.Void{}, err
	}
	if err := chromedp.Do(ctx, enable); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventLoadingFailed:
			if !e.Canceled {
				tb.errs = append(tb.errs, "request failed: "+e.ErrorText)
			}
		case *network.EventResponseReceived:
			if e.Response != nil && e.Response.Status >= 400 {
				tb.errs = append(tb.errs, fmt.Sprintf("%d for %s", e.Response.Status, e.Response.URL))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	console := chromedp.Console(ctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				tb.mu.Lock()
				tb.errs = append(tb.errs, "console: "+m.String())
				tb.mu.Unlock()
			}
		}
	}()
	return tb
}

// run runs actions, failing the test on an error.
func (tb *tab) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
}

// get runs action and returns its value, failing the test on an error.
func get[T any](tb *tab, what string, action chromedp.Action[T]) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// clean fails the test if anything went wrong in the tab since the last
// call.
func (tb *tab) clean(what string) {
	tb.t.Helper()
	time.Sleep(100 * time.Millisecond) // the console's messages arrive on their own
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.errs) > 0 {
		tb.t.Errorf("%s: %s", what, strings.Join(tb.errs, "; "))
	}
	tb.errs = nil
}

// screenshot saves the whole page as name.png.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	png := get(tb, "screenshot "+name, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(tb.shot, name+".png"), png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

// upload adds the file at src through the ingest page's form, opens its
// job's page and waits until wait (a CSS selector) shows there.
func (tb *tab) upload(base, src, wait string) {
	tb.t.Helper()
	tb.run("upload "+filepath.Base(src),
		chromedp.Navigate(base+"/sources"),
		chromedp.WaitVisible(chromedp.ID("file")),
		chromedp.SetUploadFiles(chromedp.ID("file"), []string{src}),
		chromedp.Submit(chromedp.ID("file")),
		chromedp.WaitVisible(chromedp.CSS(".notice")),
		chromedp.Click(chromedp.CSS(`table.list a[href^="/jobs/"]`)),
		chromedp.WaitVisible(chromedp.CSS(wait)),
	)
}

// signIn signs in through the sign-in form.
func (tb *tab) signIn(base, secret string) {
	tb.t.Helper()
	tb.run("sign in",
		chromedp.Navigate(base+"/signin"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), secret),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.CSS(`form.who`)),
	)
}

// TestBrowser_Story runs the story a person follows in a real browser:
// sign in, read a page and follow a link, search as they type, open the
// held proposal, read its diff and accept it; every view loads with no
// console error and no failed request, and a screenshot of each is
// saved (in $CAIRN_SCREENSHOTS when set). A page whose body tries to run
// script runs nothing.
func TestBrowser_Story(t *testing.T) {
	exe := chromium(t)
	e := setup(t)
	tb := newTab(t, exe)
	tb.signIn(e.url, e.owner)
	tb.clean("sign in")
	tb.screenshot("home")

	cs, err := e.app.Log(e.ctx, "main", app.LogOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct{ name, path, wait string }{
		{"reader", "/pages/notes/a.md", ".reader .body h1"},
		{"search", "/search?q=printing", "#results mark"},
		{"review", "/review", "table.list"},
		{"proposal", fmt.Sprintf("/review/%d", e.held), "pre.diff"},
		{"history", "/history", "ol.commits"},
		{"commit", "/commits/" + cs[0].Hash.String(), "h1"},
	} {
		tb.run("open "+v.name, chromedp.Navigate(e.url+v.path), chromedp.WaitVisible(chromedp.CSS(v.wait)))
		tb.clean("the " + v.name + " view")
		tb.screenshot(v.name)
	}

	// Follow a wikilink from the reader.
	tb.run("follow a link",
		chromedp.Navigate(e.url+"/pages/notes/a.md"),
		chromedp.Click(chromedp.CSS(`.reader .body a[href="/pages/notes/b.md"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#h-movable-type`)),
	)
	title := get(tb, "title", chromedp.Title())
	if !strings.HasPrefix(title, "B ") {
		t.Errorf("after following the link the title is %q, want B's", title)
	}

	// Search as one types.
	tb.run("search as one types",
		chromedp.Navigate(e.url+"/search"),
		chromedp.WaitVisible(chromedp.ID("q")),
		chromedp.SendKeys(chromedp.ID("q"), "movable"),
		chromedp.WaitVisible(chromedp.CSS("#results mark")),
	)
	found := get(tb, "results", chromedp.Text(chromedp.CSS("#results")))
	if !strings.Contains(found, "notes/b.md") {
		t.Errorf("the results as one types: %q, want notes/b.md", found)
	}
	tb.clean("search as one types")

	// The page that tries to run script runs nothing.
	tb.run("open the evil page",
		chromedp.Navigate(e.url+"/pages/notes/evil.md"),
		chromedp.WaitVisible(chromedp.CSS(".reader .body h1")),
		chromedp.Sleep(200*time.Millisecond),
	)
	pwned := get(tb, "look for the script's mark", chromedp.Evaluate[bool](`window.pwned !== undefined`))
	if pwned {
		t.Errorf("the evil page's script ran")
	}
	tb.clean("the evil page")

	// Upload a source, open its job, see it end merged, and find the new
	// page by search.
	src := filepath.Join(t.TempDir(), "paper-mills.md")
	if err := os.WriteFile(src, []byte("# Paper mills\n\nUlman Stromer set up the first paper mill in Nuremberg in 1390.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tb.upload(e.url, src, "#activity li.ev-merged")
	tb.clean("upload and watch the job")
	tb.screenshot("job")
	tb.run("find the new page",
		chromedp.Navigate(e.url+"/search?q=Stromer"),
		chromedp.WaitVisible(chromedp.CSS("#results mark")),
	)
	tb.clean("search for the new page")
	// And in the graph: drawn, then found by its title and opened.
	tb.run("open the graph",
		chromedp.Navigate(e.url+"/graph"),
		chromedp.WaitVisible(chromedp.CSS("#graph[data-ready]")),
	)
	tb.clean("the graph view")
	tb.screenshot("graph")
	tb.run("find the new page in the graph",
		chromedp.SendKeys(chromedp.ID("g-find"), "Paper mills"),
		chromedp.WaitVisible(chromedp.CSS(`#graph[data-found="summaries/paper-mills.md"]`)),
		chromedp.SendKeys(chromedp.ID("g-find"), "\r"),
		chromedp.WaitVisible(chromedp.CSS(".reader .body")),
	)
	if title := get(tb, "title", chromedp.Title()); !strings.HasPrefix(title, "Paper mills") {
		t.Errorf("the page found in the graph is %q, want Paper mills", title)
	}
	tb.clean("open a page from the graph")

	// Ask, and follow a citation.
	tb.run("ask",
		chromedp.Navigate(e.url+"/ask"),
		chromedp.WaitVisible(chromedp.ID("q")),
		chromedp.SendKeys(chromedp.ID("q"), "What is movable type?"),
		chromedp.Submit(chromedp.ID("q")),
		chromedp.WaitVisible(chromedp.CSS(".citations a")),
	)
	tb.screenshot("ask")
	tb.run("follow a citation", chromedp.Click(chromedp.CSS(".citations a")), chromedp.WaitVisible(chromedp.CSS(".reader .body")))
	tb.clean("ask and follow a citation")

	// Run a profile tool from the same page.
	tb.run("run a tool",
		chromedp.Navigate(e.url+"/ask"),
		chromedp.WaitVisible(chromedp.ID("tool")),
		chromedp.SetValue(chromedp.ID("tool"), "evidence-map"),
		chromedp.SendKeys(chromedp.ID("focus"), "paper"),
		chromedp.Submit(chromedp.ID("focus")),
		chromedp.WaitVisible(chromedp.CSS(".answer .citations a")),
	)
	tb.clean("run a profile tool")

	for _, v := range []struct{ name, path, wait string }{
		{"sources", "/sources", "form.upload"},
		{"lint", "/lint", ".lint-page"},
		{"compare", "/compare?from=main~1&to=main", ".file"},
		{"settings", "/settings", "table.settings"},
		{"tokens", "/tokens", "table.list"},
	} {
		tb.run("open "+v.name, chromedp.Navigate(e.url+v.path), chromedp.WaitVisible(chromedp.CSS(v.wait)))
		tb.clean("the " + v.name + " view")
		tb.screenshot(v.name)
	}

	// An OAuth client's consent page.
	resp, err := http.Post(e.url+"/oauth/register", "application/json", strings.NewReader(`{"redirect_uris": ["https://app.example/cb"], "client_name": "Hosted Assistant"}`))
	if err != nil {
		t.Fatal(err)
	}
	var client struct {
		ClientID string `json:"client_id"`
	}
	json.NewDecoder(resp.Body).Decode(&client)
	resp.Body.Close()
	q := url.Values{"response_type": {"code"}, "client_id": {client.ClientID}, "redirect_uri": {"https://app.example/cb"},
		"code_challenge": {strings.Repeat("c", 43)}, "code_challenge_method": {"S256"}, "state": {"s"}, "scope": {"read"}}
	tb.run("open the consent page", chromedp.Navigate(e.url+"/oauth/authorize?"+q.Encode()), chromedp.WaitVisible(chromedp.ID("allow")))
	tb.clean("the consent page")
	tb.screenshot("consent")

	// Accept the held proposal.
	tb.run("accept",
		chromedp.Navigate(fmt.Sprintf("%s/review/%d", e.url, e.held)),
		chromedp.WaitVisible(chromedp.CSS(`button.accept`)),
		chromedp.Click(chromedp.CSS(`button.accept`)),
		chromedp.WaitVisible(chromedp.CSS(`.notice`)),
	)
	notice := get(tb, "notice", chromedp.Text(chromedp.CSS(`.notice`)))
	if !strings.Contains(notice, "accept") {
		t.Errorf("after accepting: %q", notice)
	}
	tb.clean("accept")
	if _, err := e.app.ReadFile(e.ctx, "main", "notes/b.md"); err == nil {
		t.Errorf("notes/b.md is still on main after its deletion was accepted")
	}

	// A phone-sized screen.
	tb.run("phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(e.url+"/pages/notes/a.md"), chromedp.WaitVisible(chromedp.CSS(".reader")))
	tb.clean("the reader on a phone")
	tb.screenshot("reader-phone")
}

// TestBrowser_ReadOnly checks that a session without the review scope
// sees no review buttons.
func TestBrowser_ReadOnly(t *testing.T) {
	exe := chromium(t)
	e := setup(t)
	tb := newTab(t, exe)
	tb.signIn(e.url, e.reader)
	tb.run("open the proposal",
		chromedp.Navigate(fmt.Sprintf("%s/review/%d", e.url, e.held)),
		chromedp.WaitVisible(chromedp.CSS("pre.diff")),
	)
	buttons := get(tb, "count the buttons", chromedp.Evaluate[int](`document.querySelectorAll('form[action*="/review/"] button').length`))
	if buttons != 0 {
		t.Errorf("a read-only session sees %d review buttons", buttons)
	}
	tb.clean("the proposal, read-only")
}

// TestBrowser_Languages checks that each of the ten languages renders
// its own strings in a real browser, chosen with the footer's picker.
func TestBrowser_Languages(t *testing.T) {
	exe := chromium(t)
	e := setup(t)
	cats := catalogs(t)
	tb := newTab(t, exe)
	tb.signIn(e.url, e.reader)
	for code, c := range cats {
		tb.run("choose "+code,
			chromedp.Navigate(e.url+"/"),
			chromedp.WaitVisible(chromedp.ID("lang-pick")),
			chromedp.SetValue(chromedp.ID("lang-pick"), code),
			chromedp.Submit(chromedp.ID("lang-pick")),
			chromedp.WaitVisible(chromedp.CSS(`html[lang="`+code+`"] nav`)),
		)
		got := get(tb, "the search link", chromedp.Text(chromedp.CSS(`nav a[href="/search"]`)))
		if got != c["Search"] {
			t.Errorf("%s: the search link reads %q, want %q", code, got, c["Search"])
		}
		tb.clean("the home page in " + code)
		if code == "ja" || code == "de" {
			tb.screenshot("home-" + code)
		}
	}
}

// TestBrowser_LiveActivity checks that a job's page shows its agent's
// activity as it happens: the page is opened while the source waits in
// the queue, then a worker starts, and the lines arrive on the open page,
// to the verdict, without a reload.
func TestBrowser_LiveActivity(t *testing.T) {
	exe := chromium(t)
	e := setupIdle(t)
	tb := newTab(t, exe)
	tb.signIn(e.url, e.owner)
	src := filepath.Join(t.TempDir(), "stromer.md")
	if err := os.WriteFile(src, []byte("# Stromer\n\nUlman Stromer kept a diary of his mill.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tb.upload(e.url, src, "#live")
	if n := get(tb, "count the lines", chromedp.Evaluate[int](`document.querySelectorAll("#activity li").length`)); n != 0 {
		t.Fatalf("the queued job's page shows %d lines before any worker ran", n)
	}
	e.startWorker()
	tb.run("watch the activity arrive",
		chromedp.WaitVisible(chromedp.CSS("#activity li.ev-merged")),
		chromedp.WaitVisible(chromedp.CSS(`#job-state[data-final]`)),
	)
	if state := get(tb, "the job's state", chromedp.Text(chromedp.ID("job-state"))); state != "completed" {
		t.Errorf("the job's state on the page: %q, want completed", state)
	}
	tb.clean("the live job page")
}

// TestBrowser_DropFiles checks that several files dropped on the upload
// form are the ones it sends: each becomes a source.
func TestBrowser_DropFiles(t *testing.T) {
	exe := chromium(t)
	e := setupIdle(t)
	tb := newTab(t, exe)
	tb.signIn(e.url, e.owner)
	dir := t.TempDir()
	var files []string
	for _, name := range []string{"one.md", "two.md"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("# "+name+"\n\nDropped on the form.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	tb.run("open the ingest page", chromedp.Navigate(e.url+"/sources"), chromedp.WaitVisible(chromedp.CSS("form.upload")))
	box := get(tb, "where the form is", chromedp.Evaluate[[]float64](`(() => { const r = document.querySelector("form.upload").getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`))
	drag := func(typ input.DispatchDragEventType) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := cdp.Call(ctx, tg, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: box[0], Y: box[1],
				Data: &input.DragData{Items: []*input.DragDataItem{}, Files: files, DragOperationsMask: 1}})
			return chromedp.Void{}, err
		}
	}
	tb.run("drop two files", drag(input.DispatchDragEventTypeDragEnter), drag(input.DispatchDragEventTypeDragOver), drag(input.DispatchDragEventTypeDrop))
	if n := get(tb, "the files chosen", chromedp.Evaluate[int](`document.getElementById("file").files.length`)); n != 2 {
		t.Fatalf("after the drop the form holds %d files, want 2", n)
	}
	tb.run("send them", chromedp.Submit(chromedp.ID("file")), chromedp.WaitVisible(chromedp.CSS(".notice")))
	l, err := e.app.Sources(e.ctx, app.SourceFilter{})
	if err != nil || len(l.Sources) != 2 {
		t.Errorf("after dropping two files: %+v, %v; want 2 sources", l, err)
	}
	tb.clean("drop and send")
}
