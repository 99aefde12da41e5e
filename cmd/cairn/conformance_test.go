package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestConformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, server mode, --suite all) against
// cairn serve's /mcp. The suite sends no token, so it talks to the server
// through a proxy that adds the owner's: everything else is the real
// server. Scenarios that need the suite's fixture tools, resources and
// prompts (cairn has its own) are expected failures, each with its reason,
// in testdata/conformance-baseline.yml; a new failure fails the test. It
// runs when $CAIRN_CONFORMANCE names the suite's dist/index.js and
// $CAIRN_NODE a Node 22 (.ci/run installs both); otherwise it is skipped.
func TestConformance(t *testing.T) {
	suite, node := os.Getenv("CAIRN_CONFORMANCE"), os.Getenv("CAIRN_NODE")
	if suite == "" || node == "" {
		t.Skip("$CAIRN_CONFORMANCE and $CAIRN_NODE name no conformance suite (.ci/run installs it)")
	}
	vault := sampleVault(t)
	srv := startServe(t, vault)
	target, err := url.Parse(srv.file.URL)
	if err != nil {
		t.Fatal(err)
	}
	// The proxy is transparent but for the token: a Host or Origin naming
	// the proxy names the server instead, others pass as they came.
	proxy := httptest.NewUnstartedServer(nil)
	proxy.Config.Handler = &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
		if r.In.Host == proxy.Listener.Addr().String() {
			r.Out.Host = target.Host
		}
		if o := r.In.Header.Get("Origin"); o == "http://"+proxy.Listener.Addr().String() {
			r.Out.Header.Set("Origin", srv.file.URL)
		}
		r.Out.Header.Set("Authorization", "Bearer "+srv.file.Token)
	}}
	proxy.Start()
	defer proxy.Close()
	data, err := os.ReadFile(filepath.Join("testdata", "conformance-baseline.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var baseline struct{ Server []string }
	if err := yaml.Unmarshal(data, &baseline); err != nil {
		t.Fatalf("conformance-baseline.yml: %v", err)
	}
	expected := map[string]bool{}
	for _, s := range baseline.Server {
		expected[s] = true
	}
	outDir := cmpOr(os.Getenv("CAIRN_CONFORMANCE_OUT"), t.TempDir())
	args := []string{suite, "server", "--url", proxy.URL + "/mcp", "--suite", "all", "-o", outDir}
	if sc := os.Getenv("CAIRN_CONFORMANCE_SCENARIO"); sc != "" {
		args = []string{suite, "server", "--url", proxy.URL + "/mcp", "--scenario", sc, "--verbose"}
	}
	cmd := exec.Command(node, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if os.Getenv("CAIRN_CONFORMANCE_SCENARIO") != "" {
		t.Logf("%s", out)
		return
	}
	// The suite exits 1 when any scenario fails; the baseline decides.
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run the conformance suite: %v\n%s", err, out)
	}
	dirs, err := filepath.Glob(filepath.Join(outDir, "server-*", "checks.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("the conformance suite wrote no results (%v):\n%s", err, out)
	}
	scenarios := map[string]bool{}
	passed, failed, warned := 0, 0, 0
	var unexpected, stale []string
	for _, f := range dirs {
		name := scenarioName(filepath.Base(filepath.Dir(f)))
		var checks []struct{ ID, Status, ErrorMessage string }
		data, err := os.ReadFile(f)
		if err == nil {
			err = json.Unmarshal(data, &checks)
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		scenarios[name] = true
		bad := false
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				passed++
			case "FAILURE":
				failed++
				bad = true
				if !expected[name] {
					unexpected = append(unexpected, name+": "+c.ID+": "+c.ErrorMessage)
				}
			case "WARNING":
				warned++
			}
		}
		if expected[name] && !bad {
			stale = append(stale, name)
		}
	}
	summary := fmt.Sprintf("MCP conformance (%d scenarios, --suite all): %d checks passed, %d failed, %d of them not in the baseline; %d warnings",
		len(scenarios), passed, failed, len(unexpected), warned)
	t.Log(summary)
	if f := os.Getenv("CAIRN_CONFORMANCE_SUMMARY"); f != "" {
		os.WriteFile(f, []byte(summary+"\n"), 0o644)
	}
	for _, s := range stale {
		t.Logf("baseline entry %s now passes: it may leave the baseline", s)
	}
	for _, u := range unexpected {
		t.Errorf("a conformance failure not in testdata/conformance-baseline.yml: %s", u)
	}
}

// scenarioName is the scenario of a result folder, "server-NAME-TIME".
func scenarioName(dir string) string {
	return resultTime.ReplaceAllString(strings.TrimPrefix(dir, "server-"), "")
}

var resultTime = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[\d-]+Z?$`)
