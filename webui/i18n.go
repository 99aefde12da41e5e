package webui

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/text/language"

	"cairn"
)

// langCookie keeps the language a person chose.
const langCookie = "cairn_lang"

// lang is a language of the interface.
type lang struct {
	Code, Name string
	tag        language.Tag
}

// languages are the interface's languages, English first (the one a
// browser that asks for none gets): Eva's ten.
func languages() []lang {
	return []lang{
		{"en", "English", language.English},
		{"es", "Español", language.Spanish},
		{"pt", "Português", language.Portuguese},
		{"fr", "Français", language.French},
		{"de", "Deutsch", language.German},
		{"it", "Italiano", language.Italian},
		{"ja", "日本語", language.Japanese},
		{"ko", "한국어", language.Korean},
		{"zh-Hans", "简体中文", language.SimplifiedChinese},
		{"zh-Hant", "繁體中文", language.TraditionalChinese},
	}
}

// catalog is one language's messages, by their English text. Only the
// interface's own words are translated: page content, names and what
// cairn's errors say are shown as they are.
type catalog map[string]string

// t returns the message key in the catalog's language (the key itself
// when it has none), formatted with args as fmt.Sprintf does.
func (c catalog) t(key string, args ...any) string {
	s, ok := c[key]
	if !ok || s == "" {
		s = key
	}
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
}

// loadCatalogs reads the embedded message catalogs, one per language.
func loadCatalogs() (map[string]catalog, error) {
	out := map[string]catalog{}
	for _, l := range languages() {
		b, err := files.ReadFile("locales/" + l.Code + ".json")
		if err != nil {
			return nil, fmt.Errorf("read the %s messages: %w", l.Code, err)
		}
		var c catalog
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("read the %s messages: %w", l.Code, err)
		}
		out[l.Code] = c
	}
	return out, nil
}

// langFuncs are the templates' functions of one language: t, the code
// (lang), and the languages to choose from.
func langFuncs(code string, c catalog) template.FuncMap {
	return template.FuncMap{
		"t":         c.t,
		"lang":      func() string { return code },
		"languages": languages,
	}
}

// language is the request's language: the one the person chose (the
// cookie), else the best match of the browser's Accept-Language, else
// English.
func (u *UI) language(r *http.Request) string {
	if c, err := r.Cookie(langCookie); err == nil {
		if _, ok := u.views[c.Value]; ok {
			return c.Value
		}
	}
	tags, _, err := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	if err != nil || len(tags) == 0 {
		return "en"
	}
	_, i, conf := u.matcher.Match(tags...)
	if conf == language.No {
		return "en"
	}
	return languages()[i].Code
}

// setLanguage keeps the language chosen (the form's l) for a year and goes back
// to the page it was chosen on (this site's, by the Referer), or home.
func (u *UI) setLanguage(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<10)
	code := r.PostFormValue("l")
	if _, ok := u.views[code]; !ok {
		u.fail(w, r, nil, errUnknownLanguage(code))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: langCookie, Value: code, Path: "/", MaxAge: 365 * 24 * int(time.Hour/time.Second),
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
	back := "/"
	if ref, err := url.Parse(r.Referer()); err == nil && ref.Host == r.Host {
		back = safeNext(ref.RequestURI())
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// errUnknownLanguage is the error of a language the interface lacks.
func errUnknownLanguage(code string) error {
	var codes []string
	for _, l := range languages() {
		codes = append(codes, l.Code)
	}
	return cairn.Errorf(cairn.EINVALID, "the interface has no language %q", code).
		WithHint("Choose one of " + strings.Join(codes, ", ") + ".")
}
