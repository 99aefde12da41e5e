package webui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// catalogs reads the message catalogs.
func catalogs(t *testing.T) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	paths, _ := filepath.Glob("locales/*.json")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var c map[string]string
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".json")] = c
	}
	return out
}

// TestCatalogs checks the ten languages' catalogs: each holds every
// message the templates ask for, nothing else, each translated (not
// empty), with the same formatting verbs in the same order.
func TestCatalogs(t *testing.T) {
	cats := catalogs(t)
	if len(cats) != 10 {
		t.Fatalf("%d catalogs, want 10", len(cats))
	}
	used := map[string]bool{}
	paths, _ := filepath.Glob("templates/*.html")
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		for _, m := range regexp.MustCompile(`\{\{t "((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(string(b), -1) {
			used[strings.ReplaceAll(m[1], `\"`, `"`)] = true
		}
	}
	verbs := regexp.MustCompile(`%[ds]`)
	for code, c := range cats {
		for k := range used {
			if _, ok := c[k]; !ok {
				t.Errorf("%s lacks %q", code, k)
			}
		}
		for k, v := range c {
			if strings.TrimSpace(v) == "" {
				t.Errorf("%s: %q is empty", code, k)
			}
			if a, b := verbs.FindAllString(k, -1), verbs.FindAllString(v, -1); strings.Join(a, "") != strings.Join(b, "") {
				t.Errorf("%s: %q has verbs %v, its translation %q %v", code, k, a, v, b)
			}
			if _, ok := cats["en"][k]; !ok {
				t.Errorf("%s has %q, which English lacks", code, k)
			}
		}
	}
}

// TestUI_Languages checks the language a page comes in: the browser's
// Accept-Language, or the one chosen (a cookie), which wins; a language
// the interface lacks is refused. The page's content is never translated.
func TestUI_Languages(t *testing.T) {
	e := setup(t)
	b := e.browser()
	b.signIn(e.reader)
	_, body, _ := b.do("GET", "/pages/notes/a.md", nil, "Accept-Language", "de-CH, fr;q=0.8")
	if !strings.Contains(body, `<html lang="de">`) || !strings.Contains(body, ">Suche</a>") || !strings.Contains(body, "Rückverweise") ||
		!strings.Contains(body, "The printing press") {
		t.Errorf("the reader for de-CH is not in German, or its page is translated:\n%s", body)
	}
	_, body, _ = b.do("GET", "/", nil, "Accept-Language", "zh-TW")
	if !strings.Contains(body, `<html lang="zh-Hant">`) || !strings.Contains(body, "搜尋") {
		t.Errorf("home for zh-TW is not in traditional Chinese:\n%s", body)
	}
	// Choosing changes a cookie: a GET (an image in a page) cannot.
	if code, _, _ := b.do("GET", "/lang?l=de", nil); code == http.StatusSeeOther {
		t.Errorf("GET /lang chose a language")
	}
	code, _, h := b.do("POST", "/lang", url.Values{"l": {"ja"}}, "Referer", e.url+"/search?q=type")
	if code != http.StatusSeeOther || h.Get("Location") != "/search?q=type" {
		t.Errorf("choosing Japanese = %d %s, want 303 back to the search", code, h.Get("Location"))
	}
	_, body, _ = b.do("GET", "/search?q=type", nil, "Accept-Language", "de")
	if !strings.Contains(body, `<html lang="ja">`) || !strings.Contains(body, "検索") {
		t.Errorf("after choosing Japanese the search is not in Japanese:\n%s", body)
	}
	code, body, _ = b.do("POST", "/lang", url.Values{"l": {"xx"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "zh-Hant") {
		t.Errorf("an unknown language = %d:\n%s", code, body)
	}
}
